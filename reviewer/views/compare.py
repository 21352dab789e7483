"""One clause type compared across an engagement's contracts, and accepting a group of identical wordings.
Scoped like every page: a non-member gets a 404; accepting needs a role that decides (403 otherwise)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse

from extraction.catalog import VALUE
from extraction.models import ClauseType, Extraction
from reviewer import access, compare
from reviewer import grid as grid_core
from reviewer.posting import post_only
from reviewer.timing import server_timing


def _clause_type(engagement, type_id: int) -> ClauseType:
    found = next((t for t in grid_core.catalog_types(engagement) if t.pk == type_id), None)
    if found is None:
        raise Http404("No such clause type.")
    return found


@server_timing
def compare_page(request, engagement_id: int, type_id: int | None = None):
    engagement = access.engagement_for(request.user, engagement_id)
    role = engagement.my_role  # type: ignore[attr-defined]  # annotated by reviewer.access
    raw = request.GET.get("type", "")
    if type_id is None and raw.isascii() and raw.isdigit():
        return redirect(_url(engagement.pk, int(raw), request.GET.get("dt", "")))
    types = grid_core.catalog_types(engagement)
    dts = grid_core.doc_types(engagement)
    doc_type = request.GET.get("dt", "") if request.GET.get("dt", "") in dts else ""
    context = {
        "engagement": engagement,
        "role": role,
        "types": types,
        "doc_types": dts,
        "doc_type": doc_type,
        "can_decide": role in access.DECIDE_ROLES,
        "comparison": None,
    }
    if type_id is not None:
        clause_type = _clause_type(engagement, type_id)
        context["clause_type"] = clause_type
        context["comparison"] = compare.comparison(engagement, clause_type, doc_type)
        context["show_value"] = clause_type.kind != VALUE  # a value type's wording is its value
    return render(request, "reviewer/compare.html", context)


def _url(engagement_id: int, type_id: int, doc_type: str = "") -> str:
    url = reverse("engagement-compare-type", args=[engagement_id, type_id])
    return f"{url}?{urlencode({'dt': doc_type})}" if doc_type else url


@post_only("engagement-compare-type", "engagement_id", "type_id")
def accept_group(request, engagement_id: int, type_id: int):
    engagement = access.engagement_for(request.user, engagement_id, access.DECIDE_ROLES)
    clause_type = _clause_type(engagement, type_id)
    back = _url(engagement.pk, clause_type.pk, request.POST.get("dt", ""))
    try:
        picks = compare.parse_picks(request.POST.getlist("pick"))
        n = compare.accept_group(engagement, clause_type, picks, request.user)
    except Extraction.DoesNotExist:
        raise Http404("Not found.") from None
    except compare.GroupRefused as exc:
        messages.error(request, str(exc))
        return redirect(back)
    messages.success(request, f"Accepted {n} clause{'s' if n != 1 else ''} with this wording.")
    return redirect(back)
