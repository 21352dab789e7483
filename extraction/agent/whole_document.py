"""What a whole-document task (the doc-type question, the case summary) reads of one stored document.

``extraction.agent.context.whole_document_context`` decides: a short document whole, a long one by its
sections when it has at least three headings. A long document with fewer headings is read through
retrieval: the opening chunk, then the best chunks for the task's own queries (``DOC_TYPE_QUERIES``,
``SUMMARY_QUERIES``), each query's best in turn (``retrieval.task_chunks``, five in all), so a
summary of a long contract without headings reaches payment or liability terms that come after its
first 12,000 characters.
"""

from __future__ import annotations

from collections.abc import Sequence

from extraction.agent.context import (
    ContextPack,
    whole_document_context,
    whole_document_mode,
)
from extraction.docview import DocumentView
from extraction.retrieval import task_chunks
from ingest.models import Document

DOC_TYPE_QUERIES = (
    "what kind of agreement this is and why the parties enter into it",
    "the parties and the role each one plays, such as licensor, distributor, supplier or customer",
    "WHEREAS the parties desire to enter into this agreement for the purpose of",
)
SUMMARY_QUERIES = (  # the parties and dates are in the opening chunk, read anyway
    "fees, prices and payment terms",
    "termination rights and notice periods",
    "limitation of liability, caps and indemnification",
    "governing law and dispute resolution",
    "each party's main obligations and the services or products supplied",
)


def task_context(document: DocumentView, queries: Sequence[str]) -> ContextPack:
    """The context pack of a whole-document task whose retrieval asks ``queries``."""
    retrieved = None
    if whole_document_mode(document.text, document.chunks) == "retrieval" and document.id:
        stored = Document.objects.filter(pk=document.id).first()
        retrieved = task_chunks(stored, queries) if stored is not None else None
    return whole_document_context(
        document.text, document.chunks, source=document.source, pages=document.pages, retrieved=retrieved
    )
