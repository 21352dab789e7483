"""Search across an engagement's contracts (one box, hybrid full text and vectors), scoped like every page:
a non-member gets a 404, and only the engagement's own chunks are searched."""

from __future__ import annotations

from datetime import date

from django.shortcuts import render

from extraction.verify import values_asked
from reviewer import access
from reviewer import grid as grid_core
from reviewer.engagement_search import search_engagement, split_by_values
from reviewer.timing import server_timing

QUERY_CHARS = 300  # a longer query is cut: the embedding model reads no further anyway


@server_timing
def search_page(request, engagement_id: int):
    engagement = access.engagement_for(request.user, engagement_id)
    dts = grid_core.doc_types(engagement)
    query = (request.GET.get("q") or "").strip()[:QUERY_CHARS]
    doc_type = request.GET.get("dt", "") if request.GET.get("dt", "") in dts else ""
    try:
        since = date.fromisoformat(request.GET.get("since", "")) if request.GET.get("since") else None
    except ValueError:
        since = None
    results = search_engagement(engagement, query, doc_type=doc_type, since=since) if query else []
    values = values_asked(query)
    # a query of exact values lists the passages that hold them; the rest stay a click away
    results, others = split_by_values(results) if values else (results, [])
    context = {
        "engagement": engagement,
        "role": engagement.my_role,  # type: ignore[attr-defined]  # annotated by reviewer.access
        "query": query,
        "doc_types": dts,
        "doc_type": doc_type,
        "since": since.isoformat() if since else "",
        "results": results,
        "hit_count": sum(len(r.hits) for r in results),
        "values": values,
        "others": others,
        "other_count": sum(len(r.hits) for r in others),
    }
    return render(request, "reviewer/search.html", context)
