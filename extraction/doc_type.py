"""A contract's type recorded for documents whose title names none.

Ingest reads the type from the title when it can (``ingest.doctype``). When it cannot and a run's
engine is Claude, the run asks Claude before the first clause (``extraction.agent.doc_type``), so
CASE_FACTS carries the type from then on. The type is saved only when the evidence was found and the
type is not "Other"; either way the document is marked as asked (``doc_type_source`` "model"), so
later runs do not ask again. A failed call (HTTP error, no connection, refusal) leaves it unmarked
for the next run, and the run goes on without a type.

A bulk run through the Message Batches API asks the same question at once, not batched, when it
builds a document's first request (``bulk.build.Builder``), so its requests' CASE_FACTS carry the
type too. An admin's type, or one given at upload, is never replaced (the save only fills an empty
type).
"""

from __future__ import annotations

import logging

from extraction.agent.claude_call import ClaudeCallError
from extraction.agent.doc_type import DocTypeAnswer
from extraction.docview import DocumentView
from extraction.models import ExtractionRun
from extraction.run_status import add_usage
from ingest.doctype import type_choices
from ingest.models import Document

log = logging.getLogger(__name__)


def needs_asking(document_id: int) -> bool:
    """True for a document with no type that nobody has asked Claude about yet (read afresh: the
    batch builder and a resumed run hold rows loaded before an earlier answer was saved)."""
    row = Document.objects.filter(pk=document_id).values("doc_type", "doc_type_source").first()
    return row is not None and not row["doc_type"] and not row["doc_type_source"]


def classify_for_run(
    run: ExtractionRun, document: Document, view: DocumentView, engine
) -> DocTypeAnswer | None:
    """Ask the run's engine for ``document``'s type when it has none and the engine can tell (Claude);
    save what passed the checks and add the call's usage to the run. None when nothing was asked."""
    classify = getattr(engine, "classify", None)
    if classify is None or not needs_asking(document.pk):
        return None
    try:
        answer = classify(view, type_choices(document.engagement))
    except ClaudeCallError as exc:
        log.warning("document %s: its type was not asked of Claude: %s", document.pk, exc)
        return None
    add_usage(run, answer.usage, batch=False)  # one Messages call, at the standard rate even in a bulk run
    typed = {"doc_type": answer.doc_type} if answer.doc_type else {}
    Document.objects.filter(pk=document.pk, doc_type="").update(
        doc_type_source=Document.TypeSource.MODEL, **typed
    )
    if answer.doc_type is None:
        log.info("document %s: Claude gave no type (%s)", document.pk, answer.problem or "Other")
    else:
        log.info(
            "document %s: Claude read its type as %s from %r", document.pk, answer.doc_type, answer.evidence
        )
    return answer
