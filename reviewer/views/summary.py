"""A document's case summary: the latest one (or an earlier one, all kept), and making a new one."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from config.params import id_param
from extraction.engines import resolve_engine_name
from reviewer import access
from reviewer.summaries import SummaryError, make_summary


@require_http_methods(["GET", "POST"])
def summary(request, document_id: int):
    if request.method == "POST":
        doc = access.document_for(request.user, document_id, access.FIND_ROLES)
        try:
            made = make_summary(doc, request.user)
        except SummaryError as exc:
            messages.error(request, f"No summary made: {exc}")
        else:
            checked = (
                f"{made.unverified_count} value{'s' if made.unverified_count != 1 else ''} not found in the "
                "document: check them"
                if made.unverified_count
                else "every value found in the document"
            )
            messages.success(request, f"Summary made ({checked}).")
        return redirect("document-summary", doc.pk)
    doc = access.document_for(request.user, document_id)
    kept = list(
        doc.summaries.select_related("created_by").defer("points", "usage").order_by("-id")
    )  # the list
    wanted = id_param(request.GET.get("id")) if request.GET.get("id") else (kept[0].pk if kept else None)
    shown = doc.summaries.filter(pk=wanted).first() if wanted is not None else None
    if request.GET.get("id") and shown is None:
        raise Http404("No such summary of this document.")
    role = doc.my_role  # type: ignore[attr-defined]  # annotated by reviewer.access
    return render(
        request,
        "reviewer/summary.html",
        {
            "document": doc,
            "role": role,
            "summary": shown,
            "kept": kept,
            "can_summarise": role in access.FIND_ROLES,
            "engine": resolve_engine_name(),
        },
    )
