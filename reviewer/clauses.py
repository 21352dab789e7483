"""The clause list of a document (grouped by type) and per-document clause counts. Free questions asked
with Find a clause are not clauses: they are listed, and counted, apart (``reviewer.questions``)."""

from __future__ import annotations

from itertools import groupby

from django.db.models import Count, F, Func, Max, OuterRef, Q, QuerySet, Subquery, TextField, Value
from django.db.models.functions import MD5, Cast, Concat, Lower, Trim

from extraction.models import ClauseTask, Extraction, ExtractionRun, questions
from ingest.models import Document
from reviewer.models import Review
from reviewer.states import PENDING, STATE_LABELS


def _latest(field: str):
    return Subquery(Review.objects.filter(extraction=OuterRef("pk")).order_by("-id").values(field)[:1])


# Whitespace when answers are compared: PostgreSQL's \s and the no-break spaces it leaves out
# (U+00A0, U+2007, U+202F)
SPACES = "[\\s\u00a0\u2007\u202f]+"


def folded_text(field: str = "clause_text"):
    """The one definition of "the same text" for two answers of a clause type, whitespace runs and case
    aside, worked out by the database (an MD5 of it): the documents table counts distinct answers by it and
    the clause list folds repeats by it (``answer_key``), so the two never disagree. (Two definitions, one
    in SQL and one in Python, differed on "ß" and ligatures, and the table said "2 found" beside one
    listed item.)"""
    spaced = Func(
        F(field), Value(SPACES), Value(" "), Value("g"), function="regexp_replace", output_field=TextField()
    )
    return MD5(Lower(Trim(spaced)))


def with_review_state(extractions: QuerySet) -> QuerySet:
    """Annotate each extraction with its latest decision and corrected text, and the folded text its answer
    is told apart by (one query)."""
    return extractions.annotate(
        folded_text=folded_text(),
        latest_decision=_latest("decision"),
        latest_correction=Subquery(
            Review.objects.filter(extraction=OuterRef("pk"), decision="correct")
            .order_by("-id")
            .values("corrected_text")[:1]
        ),
    )


def decorate(extraction) -> None:
    decision = getattr(extraction, "latest_decision", None) or PENDING
    extraction.review_state = decision
    extraction.review_label = STATE_LABELS[decision]
    extraction.current_text = getattr(extraction, "latest_correction", None) or extraction.clause_text


def answer_key(extraction) -> tuple[str, str]:
    """What makes two extractions of one clause type the same answer: status and the text the engine
    found, whitespace and case aside (``folded_text``, annotated by ``with_review_state``)."""
    return extraction.status, extraction.folded_text


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


_FIELDS = (
    "id",
    "document_id",
    "status",
    "engine",
    "clause_text",
    "version",
    "confidence",
    "clause_type__name",
)


def _rows(extractions: QuerySet) -> list[Extraction]:
    rows = list(
        with_review_state(extractions)
        .select_related("clause_type")
        .only(*_FIELDS)
        .order_by("clause_type__name", "-id")
    )
    for row in rows:
        decorate(row)
    return rows


def groups(document: Document) -> list[tuple[str, list[Extraction]]]:
    """[(clause type name, [extractions, repeats folded])] in catalog-name order; free questions aside."""
    rows = _rows(Extraction.objects.filter(document_id=document.pk).exclude(questions("clause_type")))
    return [
        (name, fold_repeats(list(items))) for name, items in groupby(rows, key=lambda r: r.clause_type.name)
    ]


def _same_type(extraction_id: int, lock: bool = False) -> tuple[Extraction, list[Extraction]]:
    """The extraction and every extraction of its clause type on its document (newest first); ``lock``:
    their rows locked (in id order) until the end of the transaction, before their reviews are read (a
    statement sees what was committed when it began, so reading them with the lock would miss a decision
    committed while it waited)."""
    if lock:
        mine = Extraction.objects.filter(pk=extraction_id)
        locked = list(
            Extraction.objects.select_for_update()
            .filter(
                document_id=Subquery(mine.values("document_id")),
                clause_type_id=Subquery(mine.values("clause_type_id")),
            )
            .order_by("id")
            .values_list("document_id", "clause_type_id")
        )
        if not locked:
            raise Extraction.DoesNotExist(f"No extraction {extraction_id}.")
        document_id, clause_type_id = locked[0]
    else:
        row = Extraction.objects.only("document_id", "clause_type_id").get(pk=extraction_id)
        document_id, clause_type_id = row.document_id, row.clause_type_id
    rows = _rows(Extraction.objects.filter(document_id=document_id, clause_type_id=clause_type_id))
    return next(ex for ex in rows if ex.pk == extraction_id), rows


def one(extraction_id: int):
    """One extraction as its list item shows it (with the repeats it stands for)."""
    mine, rows = _same_type(extraction_id)
    # repeats: a plain attribute the list item reads, not a model field
    mine.repeats = sum(answer_key(ex) == answer_key(mine) for ex in rows)  # type: ignore[attr-defined]
    return mine


def listed_as(extraction_id: int) -> int:
    """The id of the list item that stands for ``extraction_id``: itself, unless it repeats an answer
    another item shows ("Find a clause" finding a clause already listed, and perhaps decided)."""
    mine, rows = _same_type(extraction_id)
    return _listed_in(mine, rows)


def lock_with_repeats(extraction_id: int) -> tuple[Extraction, Extraction]:
    """(the extraction, the one the list shows for it), the rows of every extraction of its clause type on
    its document locked: a decision on one of them waits for a decision on any other."""
    mine, rows = _same_type(extraction_id, lock=True)
    shown = _listed_in(mine, rows)
    return mine, next(ex for ex in rows if ex.pk == shown)


def _listed_in(mine, rows: list) -> int:
    return next(ex.pk for ex in fold_repeats(rows) if answer_key(ex) == answer_key(mine))


def counted(documents: QuerySet) -> list:
    """The documents with clause counts by status (distinct answers, as the clause list shows
    them), how many clauses have a decision, and how many clause types are still being extracted by
    a run started from the app (``n_extracting``; bulk runs show their progress on their own page).

    ``n_extracting`` is a second query, grouped by document: as a subquery of the counting query it
    was run once per extracted clause (PostgreSQL evaluates what it groups by on every joined row),
    each time over every run, a second a poll of the documents table in a large engagement."""
    # distinct answers, as the clause list shows them (``fold_repeats``, ``answer_key``: status and text,
    # whitespace and case aside): a repeat counts once
    answer = Concat(
        Cast("extractions__clause_type_id", TextField()),
        Value("|"),
        F("extractions__status"),
        Value("|"),
        folded_text("extractions__clause_text"),
        output_field=TextField(),
    )

    def n(**where):  # a free question's answer is not a clause
        return Count(answer, filter=Q(**where) & ~questions("extractions__clause_type"), distinct=True)

    rows = list(
        documents.annotate(
            n_found=n(extractions__status="found"),
            n_not_found=n(extractions__status="not_found"),
            n_unverified=n(extractions__status="unverified"),
            n_reviewed=n(extractions__reviews__isnull=False),
        )
    )
    open_tasks = {
        document_id: (n, running)
        for document_id, n, running in _open_tasks()
        .filter(document_id__in=[d.pk for d in rows])
        .values_list("document_id")
        .annotate(n=Count("pk"), running=Count("pk", filter=Q(status=ClauseTask.Status.RUNNING)))
        .order_by()
    }
    # when the extraction last moved: a clause type started or ended (done ones included)
    changed = dict(
        ClauseTask.objects.filter(run__mode=ExtractionRun.Mode.SYNC, document_id__in=list(open_tasks))
        .values_list("document_id")
        .annotate(last=Max("updated_at"))
        .order_by()
    )
    for row in rows:
        row.n_extracting, running = open_tasks.get(row.pk, (0, 0))
        row.extracting_running, row.extracting_changed_at = running > 0, changed.get(row.pk)
    return rows


def _open_tasks() -> QuerySet:
    """Clause tasks still to do in runs started from the app (not bulk runs)."""
    return ClauseTask.objects.filter(
        run__mode=ExtractionRun.Mode.SYNC, status__in=[ClauseTask.Status.PENDING, ClauseTask.Status.RUNNING]
    )


def extracting(document: Document) -> int:
    """How many clause types of ``document`` an app-started run is still extracting."""
    return _open_tasks().filter(document_id=document.pk).count()


def still_working(documents) -> bool:
    """Whether the documents table should keep refreshing itself (pipeline or extraction under way)."""
    return any(not d.is_terminal or d.n_extracting for d in documents)
