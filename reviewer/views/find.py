"""“Find a clause”: a catalog type or a free question, run now by the extraction service."""

from __future__ import annotations

import logging

from django.shortcuts import redirect, render
from django.urls import reverse

from extraction.service import FindClauseError, find_clause
from reviewer import access, clauses, workspace
from reviewer.forms import FindForm
from reviewer.htmx import is_fragment
from reviewer.posting import post_only
from reviewer.views.review import respond

log = logging.getLogger(__name__)


@post_only("document", "document_id")
def find(request, document_id: int):
    doc = access.document_for(request.user, document_id, access.FIND_ROLES)
    form = FindForm(request.POST, engagement=doc.engagement)
    extraction, error = None, ""
    if not form.is_valid():
        error = (
            " ".join(str(m) for field_errors in form.errors.values() for m in field_errors)
            or "Pick a clause type or type a question."
        )
    elif doc.status != "ready":
        error = f"This document is not ready yet ({doc.get_status_display()}); try again when it is."
    else:
        extraction, error = _run(doc, request.user, form.cleaned_data)
    if extraction is None:
        return _refused(request, doc, form, error)
    shown = clauses.listed_as(extraction.pk)  # a clause found again opens as the list shows it
    url = reverse("clause", args=[doc.pk, shown])
    if not is_fragment(request):
        return redirect(url)
    ex = access.extraction_for(request.user, doc.pk, shown, with_rows=True)
    role = ex.my_role  # type: ignore[attr-defined]  # annotated by reviewer.access
    response = respond(
        request, ex.document, role, workspace.build(ex.document, extraction=ex), extra={"refresh_list": True}
    )
    response["HX-Push-Url"] = url
    return response


def _run(doc, user, data):
    try:
        extraction = find_clause(
            doc,
            user=user,
            clause_type=data.get("clause_type"),
            question=(data.get("question") or "").strip() or None,
        )
    except (ValueError, FindClauseError) as exc:  # said in words by the service
        return None, f"Could not find it: {exc}"
    except Exception:  # an engine failure is shown in words, never as a 500
        log.exception("find_clause failed for document %s", doc.pk)
        return None, "The search failed on the server; try again, or ask an admin to check the logs."
    if extraction is None:
        return None, "The search finished without an answer."
    return extraction, ""


def _refused(request, doc, form, error):
    if is_fragment(request):  # show the message in the find box, leave the workspace as it is
        response = render(
            request,
            "reviewer/_find.html",
            {"document": doc, "find_form": form, "find_error": error},
            status=422,
        )
        response["HX-Retarget"] = "#find-form"
        response["HX-Reswap"] = "outerHTML"
        return response
    ws = workspace.build(doc, page_number=1) if doc.page_count else workspace.Workspace(doc)
    return respond(request, doc, doc.my_role, ws, status=422, extra={"find_error": error, "find_form": form})
