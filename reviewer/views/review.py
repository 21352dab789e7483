"""The document review page: clause list, source viewer, decision panel and history.

Every URL renders the whole page (links and forms work without JavaScript); an htmx
request gets only the workspace fragment, and the URL is pushed so it can be shared.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers

from ingest.doctype import type_choices
from reviewer import access, clauses, deletions, questions, workspace
from reviewer.decisions import CHOOSE, DecisionError, InvalidDecision, StaleDecision, record_decision
from reviewer.forms import DecisionForm, FindForm
from reviewer.htmx import is_fragment
from reviewer.posting import post_only
from reviewer.states import CORRECT
from reviewer.timing import server_timing

TYPE_CHANGES_SHOWN = 5


def document(request, document_id: int):
    doc = access.document_for(request.user, document_id)
    ws = workspace.build(doc, page_number=1) if doc.page_count else workspace.Workspace(doc)
    role = doc.my_role  # type: ignore[attr-defined]  # annotated by reviewer.access
    return respond(request, doc, role, ws)


def document_clauses(request, document_id: int):
    """The clause list alone: polled by the document page while its clauses are being extracted."""
    doc = access.document_for(request.user, document_id)
    return render(request, "reviewer/_clause_list.html", {"document": doc, **lists(doc)})


def lists(doc) -> dict:
    """What the clause pane lists: the clauses by type, how many types are still being extracted, and the
    questions asked (apart: they are not clauses)."""
    return {
        "groups": clauses.groups(doc),
        "extracting": clauses.extracting(doc),
        "questions": questions.listed(doc),
    }


@server_timing
def document_page(request, document_id: int, number: int):
    doc = access.document_for(request.user, document_id)
    goto = _goto(request, doc, number, lambda n: reverse("document-page", args=[doc.pk, n]))
    if goto is not None and not is_fragment(request):
        return redirect(goto[1])
    number = goto[0] if goto else number
    _check_page(doc, number)
    ws = workspace.build(doc, page_number=number)
    role = doc.my_role  # type: ignore[attr-defined]  # annotated by reviewer.access
    return _pushed(respond(request, doc, role, ws), goto)


@server_timing
def clause(request, document_id: int, extraction_id: int):
    ex = access.extraction_for(request.user, document_id, extraction_id, with_rows=True, pages_for=0)
    ws = workspace.build(ex.document, extraction=ex)
    role = ex.my_role  # type: ignore[attr-defined]  # annotated by reviewer.access
    return respond(request, ex.document, role, ws)


@server_timing
def citation(request, document_id: int, extraction_id: int, citation_id: int):
    ex = access.extraction_for(
        request.user, document_id, extraction_id, with_rows=True, pages_for=citation_id
    )
    ws = workspace.build(ex.document, extraction=ex, citation_id=citation_id)
    role = ex.my_role  # type: ignore[attr-defined]  # annotated by reviewer.access
    return respond(request, ex.document, role, ws)


@server_timing
def clause_page(request, document_id: int, extraction_id: int, number: int):
    ex = access.extraction_for(request.user, document_id, extraction_id, with_rows=True)
    goto = _goto(
        request, ex.document, number, lambda n: reverse("clause-page", args=[ex.document_id, ex.pk, n])
    )
    if goto is not None and not is_fragment(request):
        return redirect(goto[1])
    number = goto[0] if goto else number
    _check_page(ex.document, number)
    ws = workspace.build(ex.document, extraction=ex, page_number=number)
    role = ex.my_role  # type: ignore[attr-defined]  # annotated by reviewer.access
    return _pushed(respond(request, ex.document, role, ws), goto)


def _goto(request, doc, number: int, url_of):
    """The "go to page" box submits ?n=; answer with the canonical page URL (clamped to the document)."""
    raw = request.GET.get("n")
    if raw is None:
        return None
    try:
        wanted = int(raw)
    except ValueError:
        wanted = number
    wanted = min(max(wanted, 1), max(doc.page_count, 1))
    return wanted, url_of(wanted)


def _pushed(response, goto):
    if goto is not None:
        response["HX-Push-Url"] = goto[1]
    return response


@post_only("clause", "document_id", "extraction_id")
def decide(request, document_id: int, extraction_id: int):
    ex = access.extraction_for(request.user, document_id, extraction_id, access.DECIDE_ROLES)
    form = DecisionForm(request.POST)
    citation_id, page = _shown(request.POST, ex.document.page_count)  # valid form or not, show it again
    status, error, kind, moved = 200, "", "", False
    if not form.is_valid():
        status, error, kind = 422, _form_error(form), "invalid"
    else:
        data = form.cleaned_data
        try:
            review = record_decision(
                extraction_id=ex.pk,
                user=request.user,
                decision=data["decision"],
                reason=data["reason"],
                corrected_text=data["corrected_text"],
                seen_review_id=data["seen_review"],
                seen_version=data["seen_version"],
            )
        except StaleDecision as exc:
            status, error, kind = 409, str(exc), "stale"
            if exc.latest is not None and exc.latest.extraction_id != ex.pk:  # decided as the repeat listed
                extraction_id, citation_id, moved = exc.latest.extraction_id, None, True
        except InvalidDecision as exc:
            status, error, kind = 422, str(exc), exc.kind
        except DecisionError as exc:  # pragma: no cover - any other refusal
            status, error, kind = 400, str(exc), "invalid"
        else:
            if review.decision == CORRECT:  # shown where the corrected text stands, not where it was
                citation_id, page = None, None
            if not is_fragment(request):
                messages.success(request, f"Recorded: {review.decision_label.lower()}.")
                return redirect(_clause_url(ex, citation_id, page), permanent=False)
    ex = access.extraction_for(
        request.user,
        document_id,
        extraction_id,
        with_rows=True,  # fresh version, state
        pages_for=citation_id or 0,
    )
    ws = workspace.build(ex.document, extraction=ex, citation_id=citation_id, page_number=page, strict=False)
    extra = {
        "decision_error": error,
        "error_kind": kind,
        "saved": not error,
        "draft": request.POST if error else None,
        "refresh_list": moved,
    }
    role = ex.my_role  # type: ignore[attr-defined]  # annotated by reviewer.access
    response = respond(request, ex.document, role, ws, status=status, extra=extra, refresh_item=True)
    if moved:
        response["HX-Push-Url"] = reverse("clause", args=[ex.document_id, ex.pk])
    return response


def respond(request, doc, role, ws, *, status=200, extra=None, refresh_item=False):
    asked = ws.extraction is not None and questions.is_question(ws.extraction)
    context = {
        "document": doc,
        "ws": ws,
        "role": role,
        "can_decide": role in access.DECIDE_ROLES,
        "can_find": role in access.FIND_ROLES,
        "asked": questions.asked(ws.extraction) if asked else None,  # who asked the question, when
        **(extra or {}),
    }
    if is_fragment(request):
        if context.get("refresh_list"):
            context.update(lists(doc))
        if refresh_item and ws.extraction is not None:
            if asked:
                context["oob_question"] = questions.item(ws.extraction)
            else:
                context["oob_item"] = clauses.one(ws.extraction.pk)
        response = render(request, "reviewer/_workspace.html", context, status=status)
    else:
        context.update(lists(doc))
        context["find_form"] = (
            extra.get("find_form")
            if extra and extra.get("find_form")
            else FindForm(engagement=doc.engagement)
        )
        if role == access.ADMIN:
            context["doc_type_choices"] = type_choices(doc.engagement)
            context["type_changes"] = doc.type_changes.select_related("changed_by")[:TYPE_CHANGES_SHOWN]
            context["deletion"] = deletions.contents(doc.pk)
        response = render(request, "reviewer/document.html", context, status=status)
    patch_vary_headers(response, ("HX-Request", "HX-History-Restore-Request"))
    return response


def _check_page(doc, number: int) -> None:
    if number < 1 or number > max(doc.page_count, 1):
        raise Http404("No such page.")


def _shown(post, page_count: int) -> tuple[int | None, int | None]:
    """(citation id, page number) the decision form was posted from: the citation being read, else
    the page being read (one outside the document is ignored), else neither (the first citation)."""

    def number(name):
        raw = post.get(name, "")
        return int(raw) if raw.isascii() and raw.isdigit() and int(raw) >= 1 else None

    citation_id, page = number("citation"), number("page")
    if citation_id is not None or (page is not None and page > max(page_count, 1)):
        page = None
    return citation_id, page


def _clause_url(ex, citation_id=None, page=None) -> str:
    if page:
        return reverse("clause-page", args=[ex.document_id, ex.pk, page])
    if citation_id and ex.citations.filter(pk=citation_id).exists():
        return reverse("citation", args=[ex.document_id, ex.pk, citation_id])
    return reverse("clause", args=[ex.document_id, ex.pk])


def _form_error(form) -> str:
    if form.errors.get("decision"):
        return CHOOSE
    if form.errors.get("seen_review") or form.errors.get("seen_version"):
        return "This form is out of date: reload the clause and decide again."
    return " ".join(str(e) for errs in form.errors.values() for e in errs)
