"""The clause list of a document (grouped by type) and per-document clause counts."""
from __future__ import annotations

from itertools import groupby

from django.db.models import Count, F, Func, OuterRef, Q, QuerySet, Subquery, TextField, Value
from django.db.models.functions import MD5, Cast, Coalesce, Concat, Lower, Trim

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


def answer_key(extraction) -> tuple[str, str]:
    """What makes two extractions of one clause type the same answer: status and the text the engine
    found (whitespace and case aside)."""
    return extraction.status, " ".join(extraction.clause_text.split()).casefold()


def fold_repeats(items: list) -> list:
    """One clause type's extractions, newest first -> one item per distinct answer.

    Each run extracts every clause type again (extracted on upload, then a bulk run, then "Find a
    clause"), mostly with the same result. A repeat is not listed twice: the item shown for an
    answer is the one reviewers decided on (the newest such), else the newest, and ``repeats``
    says how many extractions it stands for. Different answers stay separate items."""
    buckets: dict[tuple[str, str], list] = {}
    for ex in items:
        buckets.setdefault(answer_key(ex), []).append(ex)
    shown = []
    for bucket in buckets.values():
        item = next((ex for ex in bucket if ex.review_state != PENDING), bucket[0])
        item.repeats = len(bucket)
        shown.append(item)
    return shown


_FIELDS = ("id", "document_id", "status", "engine", "clause_text", "version", "clause_type__name")


def _rows(extractions: QuerySet) -> list[Extraction]:
    rows = list(with_review_state(extractions).select_related("clause_type").only(*_FIELDS)
                .order_by("clause_type__name", "-id"))
    for row in rows:
        decorate(row)
    return rows


def groups(document) -> list[tuple[str, list[Extraction]]]:
    """[(clause type name, [extractions, repeats folded])] in catalog-name order."""
    rows = _rows(Extraction.objects.filter(document_id=document.pk))
    return [(name, fold_repeats(list(items))) for name, items in groupby(rows, key=lambda r: r.clause_type.name)]


def _same_type(extraction_id: int) -> tuple[Extraction, list[Extraction]]:
    """The extraction and every extraction of its clause type on its document (newest first)."""
    row = Extraction.objects.only("document_id", "clause_type_id").get(pk=extraction_id)
    rows = _rows(Extraction.objects.filter(document_id=row.document_id, clause_type_id=row.clause_type_id))
    return next(ex for ex in rows if ex.pk == extraction_id), rows


def one(extraction_id: int):
    """One extraction as its list item shows it (with the repeats it stands for)."""
    mine, rows = _same_type(extraction_id)
    mine.repeats = sum(answer_key(ex) == answer_key(mine) for ex in rows)
    return mine


def listed_as(extraction_id: int) -> int:
    """The id of the list item that stands for ``extraction_id``: itself, unless it repeats an answer
    another item shows ("Find a clause" finding a clause already listed, and perhaps decided)."""
    mine, rows = _same_type(extraction_id)
    return next(ex.pk for ex in fold_repeats(rows) if answer_key(ex) == answer_key(mine))


def counted(documents: QuerySet) -> QuerySet:
    """Documents annotated with clause counts by status (distinct answers, as the clause list shows
    them), how many clauses have a decision, and how many clause types are still being extracted by
    a run started from the app (``n_extracting``; bulk runs show their progress on their own page)."""
    # distinct answers, as the clause list shows them (``fold_repeats``, ``answer_key``: status and text,
    # whitespace and case aside): a repeat counts once
    spaced = Func(F("extractions__clause_text"), Value(r"\s+"), Value(" "), Value("g"), function="regexp_replace",
                  output_field=TextField())
    answer = Concat(Cast("extractions__clause_type_id", TextField()), Value("|"), F("extractions__status"),
                    Value("|"), MD5(Lower(Trim(spaced))), output_field=TextField())

    def n(**where):
        return Count(answer, filter=Q(**where), distinct=True)

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
