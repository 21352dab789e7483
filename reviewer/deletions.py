"""An admin deletes a wrongly uploaded document, with what came from it (pages, chunks, extracted clauses,
summaries, type changes); a document whose clauses carry reviewer decisions stays.

Every decision is kept for the audit trail (``Review`` protects its clause), and a decision means
nothing without the clause and the text it was made on. The deletion goes through the ORM, so the
signals that follow a document's deletion run: ``ingest.removal`` takes the stored file once it
commits, ``bulk.cancel`` cancels the batches still running for it; a pipeline working on it
finds it gone and stops (``ingest.pipeline.run_stage``, ``extraction.pipeline.gone``).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Count, IntegerField, OuterRef, Subquery
from django.db.models.deletion import ProtectedError
from django.db.models.functions import Coalesce

from extraction.models import Extraction
from ingest.models import Chunk, Document, Page
from reviewer.models import CaseSummary, Review


class DeletionRefused(Exception):
    """The document stays; the message says why, in words for the admin."""


@dataclass(frozen=True)
class Contents:
    """What goes with a document, and the decisions that keep it."""

    title: str
    pages: int
    chunks: int
    clauses: int
    summaries: int
    decisions: int

    @property
    def deletable(self) -> bool:
        return not self.decisions

    @property
    def goes_with(self) -> str:
        """In words: 6 pages, 12 chunks, 5 extracted clauses and 1 summary."""
        parts = [
            _counted(self.pages, "page"),
            _counted(self.chunks, "chunk"),
            _counted(self.clauses, "extracted clause"),
            _counted(self.summaries, "summary", "summaries"),
        ]
        return f"{', '.join(parts[:-1])} and {parts[-1]}"

    @property
    def refusal(self) -> str:
        return refusal(self.title, self.decisions)


def _counted(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def refusal(title: str, decisions: int) -> str:
    """Why a document with ``decisions`` on its clauses is not deleted."""
    decided = _counted(decisions, "reviewer decision")
    are = "is" if decisions == 1 else "are"
    return (
        f"“{title}” stays: {decided} on its clauses {are} kept for the audit trail, "
        "and a decision needs the clause and the text it was made on."
    )


def _count(queryset, document_path: str):
    """The number of rows of ``queryset`` whose document is the outer row, as a subquery."""
    rows = (
        queryset.filter(**{document_path: OuterRef("pk")})
        .order_by()
        .values(document_path)
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(rows, output_field=IntegerField()), 0)


def contents(document_id: int) -> Contents | None:
    """What goes with the document (one query); None when it is gone already."""
    row = (
        Document.objects.filter(pk=document_id)
        .annotate(
            n_pages=_count(Page.objects.all(), "document_id"),
            n_chunks=_count(Chunk.objects.all(), "document_id"),
            n_clauses=_count(Extraction.objects.all(), "document_id"),
            n_summaries=_count(CaseSummary.objects.all(), "document_id"),
            n_decisions=_count(Review.objects.all(), "extraction__document_id"),
        )
        .values("title", "n_pages", "n_chunks", "n_clauses", "n_summaries", "n_decisions")
        .first()
    )
    if row is None:
        return None
    return Contents(
        row["title"],
        row["n_pages"],
        row["n_chunks"],
        row["n_clauses"],
        row["n_summaries"],
        row["n_decisions"],
    )


def _decisions_on(document_id: int) -> int:
    return Review.objects.filter(extraction__document_id=document_id).count()


def delete_document(document_id: int) -> Contents:
    """Delete the document with what came from it; returns what went. Raises ``DeletionRefused`` when
    reviewer decisions keep it (also one recorded while it is being deleted) or it is gone already."""
    found = contents(document_id)
    if found is None:
        raise DeletionRefused("This document was deleted already.")
    if not found.deletable:
        raise DeletionRefused(found.refusal)
    try:
        with transaction.atomic():
            # text deferred: it can be megabytes, and nothing that runs on the deletion reads it
            Document.objects.filter(pk=document_id).defer("text").delete()
    except (ProtectedError, IntegrityError):
        # a decision recorded since the count: the ORM's PROTECT saw it, or the database's foreign key at
        # commit
        raise DeletionRefused(refusal(found.title, _decisions_on(document_id))) from None
    return found
