"""Case summaries of a document: what reviewers left standing, summarised, and every summary kept.

``make_summary(document, user)`` builds one with the configured engine (``EXTRACTION_ENGINE``:
Claude when a key is set, else the offline key-terms summary of :mod:`extraction.summary`) and
saves it as a new :class:`CaseSummary`; earlier ones stay.
"""

from __future__ import annotations

from itertools import groupby

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import OuterRef, Subquery

from extraction.agent.engine import make_client
from extraction.docview import load_document
from extraction.engines import resolve_engine_name
from extraction.evaluation.stratify import NOT_FOUND
from extraction.models import Citation, Extraction
from extraction.outcome import EngineError
from extraction.summary import Source, Summary, SummaryError, ask_claude, offline_summary
from ingest.models import Document
from reviewer.clauses import answer_key, decorate, fold_repeats, with_review_state
from reviewer.models import CaseSummary
from reviewer.states import ACCEPT, CORRECT, PENDING

__all__ = ["SummaryError", "make_summary", "standing_clauses"]


def standing_clauses(document: Document) -> list[Source]:
    """The document's clauses as they stand after review, from the latest run of each clause type:
    found and not rejected, accepted (even if flagged unverified), or corrected (the reviewer's text,
    also when accepted after; a correction to "not_found" marks the clause absent). When nobody has
    reviewed the latest run's answers for a type yet, the answers reviewers accepted or corrected in
    the newest run they kept any of stand instead: a rerun that words the clause differently (or
    misses it) does not drop a reviewer's correction.
    A latest-run answer that repeats an earlier one is judged by the item the clause list shows for
    it (``clauses.fold_repeats``: the one reviewers decided on), so a rejected clause found again
    stays out."""
    first_page = (
        Citation.objects.filter(extraction=OuterRef("pk")).order_by("ordinal", "id").values("page")[:1]
    )
    rows = (
        with_review_state(Extraction.objects.filter(document_id=document.pk))
        .annotate(first_page=Subquery(first_page))
        .select_related("clause_type")
        .order_by("clause_type__name", "-run_id", "id")
    )
    out = []
    for name, group in groupby(rows, key=lambda r: r.clause_type.name):
        items = list(group)
        for row in items:
            decorate(row)
        shown = {answer_key(item): item for item in fold_repeats(items)}
        latest = [shown[answer_key(r)] for r in items if r.run_id == items[0].run_id]
        kept = [item for item in shown.values() if item.review_state in (ACCEPT, CORRECT)]
        if kept and all(item.review_state == PENDING for item in latest):
            newest = max(item.run_id for item in kept)  # the newest run reviewers kept answers of
            latest = [
                item for item in kept if item.run_id == newest
            ]  # (a later, unreviewed run undoes nothing)
        for item in latest:
            state, correction = item.review_state, (item.latest_correction or "").strip()
            if correction:  # the reviewer's text stands unless rejected; exactly "not_found" marks it absent
                standing = state in (CORRECT, ACCEPT) and correction != NOT_FOUND
            else:
                standing = (state == ACCEPT and item.status != Extraction.Status.NOT_FOUND) or (
                    state == PENDING and item.status == Extraction.Status.FOUND
                )
            if standing:
                out.append(Source(name, item.pk, item.first_page, item.current_text))
    return out


def make_summary(document: Document, user: User, *, engine: str | None = None, client=None) -> CaseSummary:
    """A new summary of ``document`` (ready), saved; raises ``SummaryError`` with words for the user."""
    if document.status != "ready":
        raise SummaryError(f"The document is not ready yet ({document.get_status_display()}).")
    if resolve_engine_name(engine) == "anthropic":
        summary = _claude(document, client)
    else:
        summary = offline_summary(standing_clauses(document), document.text)
        if not summary.points:
            raise SummaryError(
                "No clauses have been extracted from this document yet (or reviewers rejected "
                "them all): extract clauses first, then summarise."
            )
    return CaseSummary.objects.create(
        document=document,
        created_by=user,
        engine=summary.engine,
        model=summary.model,
        context_mode=summary.context_mode,
        truncated=summary.truncated,
        points=[p.as_dict() for p in summary.points],
        unverified_count=summary.unverified_count,
        usage=summary.usage.as_dict() if summary.usage.requests else {},
    )


def _claude(document: Document, client) -> Summary:
    try:
        client = client or make_client()
    except EngineError as exc:
        raise SummaryError(str(exc)) from exc
    return ask_claude(load_document(document), client=client, model=settings.ANTHROPIC_MODEL)
