"""The clause list of a document (grouped by type) and per-document clause counts."""
from __future__ import annotations

from itertools import groupby

from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from extraction.models import ClauseTask, Extraction, ExtractionRun
from reviewer.decisions import PENDING, STATE_LABELS
from reviewer.models import Review


def _latest(field: str):
    return Subquery(Review.objects.filter(extraction=OuterRef("pk")).order_by("-id").values(field)[:1])


def with_review_state(extractions: QuerySet) -> QuerySet:
    """Annotate each extraction with its latest decision and corrected text (one query)."""
    return extractions.annotate(
        latest_decision=_latest("decision"),
        latest_correction=Subquery(
            Review.objects.filter(extraction=OuterRef("pk"), decision="correct").order_by("-id").values("corrected_text")[:1]
        ),
    )


def decorate(extraction) -> None:
    decision = getattr(extraction, "latest_decision", None) or PENDING
    extraction.review_state = decision
    extraction.review_label = STATE_LABELS[decision]
    extraction.current_text = getattr(extraction, "latest_correction", None) or extraction.clause_text


def groups(document) -> list[tuple[str, list[Extraction]]]:
    """[(clause type name, [extractions])] in catalog-name order."""
    rows = list(
        with_review_state(Extraction.objects.filter(document_id=document.pk))
        .select_related("clause_type")
        .only("id", "document_id", "status", "engine", "clause_text", "version", "clause_type__name")
        .order_by("clause_type__name", "-id")
    )
    for row in rows:
        decorate(row)
    return [(name, list(items)) for name, items in groupby(rows, key=lambda r: r.clause_type.name)]


def one(extraction_id: int):
    row = (
        with_review_state(Extraction.objects.filter(pk=extraction_id))
        .select_related("clause_type")
        .only("id", "document_id", "status", "engine", "clause_text", "version", "clause_type__name")
        .get()
    )
    decorate(row)
    return row


def counted(documents: QuerySet) -> QuerySet:
    """Documents annotated with clause counts by status, how many clauses have a decision, and how
    many clause types are still being extracted by a run started from the app (``n_extracting``;
    bulk runs show their progress on their own page)."""
    def n(**where):
        return Count("extractions", filter=Q(**where), distinct=True)

    open_tasks = (_open_tasks().filter(document=OuterRef("pk"))
                  .values("document").annotate(n=Count("pk")).values("n"))
    return documents.annotate(
        n_found=n(extractions__status="found"),
        n_not_found=n(extractions__status="not_found"),
        n_unverified=n(extractions__status="unverified"),
        n_reviewed=n(extractions__reviews__isnull=False),
        n_extracting=Coalesce(Subquery(open_tasks), 0),
    )


def _open_tasks() -> QuerySet:
    """Clause tasks still to do in runs started from the app (not bulk runs)."""
    return ClauseTask.objects.filter(run__mode=ExtractionRun.Mode.SYNC,
                                     status__in=[ClauseTask.Status.PENDING, ClauseTask.Status.RUNNING])


def extracting(document) -> int:
    """How many clause types of ``document`` an app-started run is still extracting."""
    return _open_tasks().filter(document_id=document.pk).count()


def still_working(documents) -> bool:
    """Whether the documents table should keep refreshing itself (pipeline or extraction under way)."""
    return any(not d.is_terminal or d.n_extracting for d in documents)
