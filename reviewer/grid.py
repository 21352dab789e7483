"""The engagement grid: its contracts × the clause types of the catalog, one cell per pair.

A cell stands for every answer the runs gave for its type on its contract. Repeats of one answer are one
answer (``clauses.answer_key``, as the clause list folds them); of the distinct answers the cell shows
one: a found answer before an unverified one before "not found", a decided one before an undecided one,
the newest last of all (:func:`cell_of`, pure). A contract counts a type as found when any of its answers
is found, and as reviewed when any of them has a decision: the counts shown beside a row, the counts it
sorts by and the column totals use these two definitions alike.

What the grid shows is set by its URL (:class:`GridQuery`), so a view can be shared and the export holds
what the screen shows. The rows read are bounded whatever the engagement's size: one query for the page
of documents, one for the answers of that page (``values_list``), one for the column totals and one
count for the pages.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce, Left, Lower

from extraction.catalog import VALUE, scope
from extraction.evaluation.stratify import NOT_FOUND
from extraction.models import UNSURE_BELOW, Citation, ClauseType, Extraction, questions
from extraction.verify.values import exact_values
from ingest.models import Document
from reviewer.clauses import with_review_state
from reviewer.models import Review
from reviewer.states import PENDING, STATE_LABELS

STATUSES = ("found", "not_found", "unverified")
STATUS_LABELS = {"found": "found", "not_found": "not found", "unverified": "unverified"}
STATUS_RANK = {"found": 0, "unverified": 1, "not_found": 2}  # which answer a cell shows first
REVIEW_STATES = (PENDING, "accept", "reject", "correct")
SORTS = {
    "title": "Title A–Z",
    "-title": "Title Z–A",
    "-date": "Newest first",
    "date": "Oldest first",
    "-found": "Most found",
    "found": "Fewest found",
    "-reviewed": "Most reviewed",
    "reviewed": "Fewest reviewed",
}
PAGE_SIZES = (25, 50, 100)
DEFAULT_PAGE_SIZE = 50
VALUE_CHARS = 40  # a cell's value is cut to this many characters (the clause page has it whole)
_BARE_NUMBER = re.compile(r"[\d.,\s]+")
TEXT_READ = 1000  # characters of an answer read for its value: a cell never shows more than one value of it


@dataclass(frozen=True)
class Answer:
    """One extraction as the grid reads it (a ``values_list`` row)."""

    id: int
    document_id: int
    clause_type_id: int
    status: str
    folded: str  # clauses.folded_text: what tells one answer from another
    decision: str | None  # the latest review's, None: not reviewed
    reviewer: str | None  # who took it
    text: str  # the answer as it stands (latest correction, else the engine's), cut at TEXT_READ
    page: int | None  # its first citation's page
    review_id: int = 0  # the latest review's id (what a decision form says it saw)
    version: int = 1
    corrected: bool = False
    confidence: float | None = None  # how sure the engine is of it, when it says (Extraction.confidence)


FIELDS = (
    "id",
    "document_id",
    "clause_type_id",
    "status",
    "folded_text",
    "latest_decision",
    "latest_reviewer",
    "current_short",
    "first_page",
    "latest_review_id",
    "version",
    "latest_correction_set",
    "confidence",
)


def answers(extractions: QuerySet, text_chars: int | None = TEXT_READ) -> Iterator[Answer]:
    """The extractions as :class:`Answer` rows, in one query (their latest review, correction and first
    cited page read by subqueries); ``text_chars``: how much of each answer's text is read (None: all)."""

    def latest(field_name: str):
        return Subquery(
            Review.objects.filter(extraction=OuterRef("pk")).order_by("-id").values(field_name)[:1]
        )

    rows = (
        with_review_state(extractions)
        .annotate(
            latest_reviewer=latest("reviewer__username"),
            latest_review_id=latest("id"),
            current_short=(
                Coalesce("latest_correction", "clause_text")
                if text_chars is None
                else Left(Coalesce("latest_correction", "clause_text"), text_chars)
            ),
            latest_correction_set=ExpressionWrapper(
                Q(latest_correction__isnull=False), output_field=BooleanField()
            ),
            first_page=Subquery(
                Citation.objects.filter(extraction=OuterRef("pk"))
                .order_by("ordinal", "id")
                .values("page")[:1]
            ),
        )
        .order_by()
        .values_list(*FIELDS)
    )
    for row in rows:
        (ex_id, doc, ct, status, folded, decision, who, text, page, review_id, version, corrected, sure) = row
        yield Answer(
            ex_id,
            doc,
            ct,
            status,
            folded,
            decision,
            who,
            text or "",
            page,
            review_id or 0,
            version,
            corrected,
            sure,
        )


@dataclass
class Cell:
    answer: Answer
    value: str = ""
    answers: int = 1  # distinct answers the runs gave for this type on this contract
    dim: bool = False  # the filters ask for clauses this cell's answer is not

    @property
    def status(self) -> str:
        return self.answer.status

    @property
    def status_label(self) -> str:
        return STATUS_LABELS[self.answer.status]

    @property
    def review(self) -> str:
        return self.answer.decision or PENDING

    @property
    def review_label(self) -> str:
        return STATE_LABELS[self.review]

    @property
    def absent(self) -> bool:
        """A reviewer marked it not in this contract."""
        return self.answer.corrected and self.answer.text.strip() == NOT_FOUND


def cell_of(rows: list[Answer], kind: str = "text") -> Cell:
    """The cell of one (contract, type) from every answer the runs gave for it. Pure.

    Repeats of one answer (same status and folded text) are one answer, shown by its decided extraction
    (the newest such), else its newest. Of the distinct answers the cell shows a found one before an
    unverified one before "not found", a decided one before an undecided one, then the newest."""
    buckets: dict[tuple[str, str], list[Answer]] = {}
    for row in sorted(rows, key=lambda r: -r.id):
        buckets.setdefault((row.status, row.folded), []).append(row)
    shown = [next((r for r in bucket if r.decision), bucket[0]) for bucket in buckets.values()]
    best = min(shown, key=lambda r: (STATUS_RANK.get(r.status, len(STATUS_RANK)), not r.decision, -r.id))
    return Cell(best, value_of(best, kind), answers=len(shown))


def value_of(answer: Answer, kind: str) -> str:
    """The short value a cell shows: a value type's answer itself, else the first exact value (an amount, a
    date, a period) in the answer; nothing for "not found"."""
    text = " ".join(answer.text.split())
    if answer.status == "not_found" and not answer.corrected or text == NOT_FOUND:
        return ""
    if kind == VALUE:
        value = text
    else:  # a bare number is most often a section's ("12.1"): a value carries a sign, a unit or a month
        value = next((v for v in exact_values(text) if not _BARE_NUMBER.fullmatch(v)), "")
    return value if len(value) <= VALUE_CHARS else value[: VALUE_CHARS - 1] + "…"


@dataclass
class GridQuery:
    """What the grid shows, read from its URL's GET parameters; a value that is not one of the choices is
    ignored (the grid shows what it would without it)."""

    doc_type: str = ""
    clause_type: int | None = None  # with status / review / reviewer: which type's answers they filter by
    status: str = ""
    review: str = ""
    reviewer: int | None = None
    unsure: bool = False  # only answers the engine is less sure of than UNSURE_BELOW
    sort: str = "title"
    columns: list[int] = field(default_factory=list)  # shown clause types, catalog order
    chosen: bool = False  # the columns were chosen (else: every type)
    per_page: int = DEFAULT_PAGE_SIZE
    page: int = 1
    reviewer_name: str = ""  # the username of ``reviewer``

    @classmethod
    def parse(
        cls, params, type_ids: list[int], doc_types: list[str], reviewer_names: dict[int, str]
    ) -> GridQuery:
        def number(name: str) -> int | None:
            raw = (params.get(name) or "").strip()
            return int(raw) if raw.isascii() and raw.isdigit() else None

        q = cls()
        q.doc_type = params.get("dt", "") if params.get("dt", "") in doc_types else ""
        q.clause_type = number("type") if number("type") in type_ids else None
        q.status = params.get("status", "") if params.get("status", "") in STATUSES else ""
        q.review = params.get("review", "") if params.get("review", "") in REVIEW_STATES else ""
        q.reviewer = number("by") if number("by") in reviewer_names else None
        q.reviewer_name = reviewer_names.get(q.reviewer or 0, "")
        q.unsure = params.get("sure", "") == "less"
        q.sort = params.get("sort", "") if params.get("sort", "") in SORTS else "title"
        wanted = {int(c) for c in params.getlist("col") if c.isascii() and c.isdigit()}
        q.columns = [t for t in type_ids if t in wanted] or list(type_ids)
        q.chosen = len(q.columns) < len(type_ids)
        if q.clause_type in q.columns:  # the type the filters are about comes first, in view
            q.columns.remove(q.clause_type)
            q.columns.insert(0, q.clause_type)
        q.per_page = next((n for n in PAGE_SIZES if n == number("per")), DEFAULT_PAGE_SIZE)
        q.page = max(number("page") or 1, 1)
        return q

    @property
    def filters_clauses(self) -> bool:
        return bool(self.status or self.review or self.reviewer or self.unsure)

    def params(self, **changed) -> list[tuple[str, str | int]]:
        """The GET parameters of this view, with ``changed`` ones set (None: left out)."""
        values: dict = {
            "dt": self.doc_type,
            "type": self.clause_type,
            "status": self.status,
            "review": self.review,
            "by": self.reviewer,
            "sure": "less" if self.unsure else None,
            "sort": self.sort if self.sort != "title" else None,
            "per": self.per_page if self.per_page != DEFAULT_PAGE_SIZE else None,
            "page": self.page if self.page != 1 else None,
        }
        values.update(changed)
        out: list[tuple[str, str | int]] = [(k, v) for k, v in values.items() if v not in (None, "")]
        if self.chosen:
            out += [("col", c) for c in self.columns]
        return out

    def url(self, **changed) -> str:
        encoded = urlencode(self.params(**changed))
        return f"?{encoded}" if encoded else "?"

    def matches(self, cell: Cell | None) -> bool:
        """Whether a cell's answer is one the filters ask for (the others are shown dimmed)."""
        if not self.filters_clauses:
            return True
        if cell is None:
            return False
        a = cell.answer
        return (
            (not self.status or a.status == self.status)
            and (not self.review or cell.review == self.review)
            and (not self.reviewer or a.reviewer == self.reviewer_name)
            and (not self.unsure or (a.confidence is not None and a.confidence < UNSURE_BELOW))
        )


def catalog_types(engagement) -> list[ClauseType]:
    """The grid's possible columns: the types active in ``engagement`` (``extraction.catalog.scope``), by
    name (free questions are not types)."""
    return list(
        scope.active_types(engagement).exclude(questions()).only("id", "name", "kind").order_by("name")
    )


def reviewers(engagement) -> list:
    """The engagement's members, who the reviewer filter can name."""
    return list(
        get_user_model()
        .objects.filter(memberships__engagement=engagement)
        .only("id", "username", "first_name", "last_name")
        .order_by("username")
    )


def doc_types(engagement) -> list[str]:
    return list(
        Document.objects.filter(engagement=engagement)
        .exclude(doc_type="")
        .order_by("doc_type")
        .values_list("doc_type", flat=True)
        .distinct()
    )


def documents(engagement, q: GridQuery) -> QuerySet:
    """The engagement's documents the filters keep, in the chosen order (the text left in the database)."""
    docs = Document.objects.filter(engagement=engagement).only(
        "id", "title", "doc_type", "created_at", "status", "page_count", "engagement_id"
    )
    if q.doc_type:
        docs = docs.filter(doc_type=q.doc_type)
    if q.filters_clauses or q.clause_type:
        wanted = Extraction.objects.filter(
            document_id=OuterRef("pk"),
            clause_type_id__in=[q.clause_type] if q.clause_type else q.columns,
        )
        if q.status:
            wanted = wanted.filter(status=q.status)
        if q.unsure:
            wanted = wanted.filter(confidence__lt=UNSURE_BELOW)
        if q.review or q.reviewer:
            latest = Review.objects.filter(extraction=OuterRef("pk")).order_by("-id")
            wanted = wanted.annotate(
                grid_decision=Subquery(latest.values("decision")[:1]),
                grid_reviewer=Subquery(latest.values("reviewer_id")[:1]),
            )
            if q.review == PENDING:
                wanted = wanted.filter(grid_decision__isnull=True)
            elif q.review:
                wanted = wanted.filter(grid_decision=q.review)
            if q.reviewer:
                wanted = wanted.filter(grid_reviewer=q.reviewer)
        docs = docs.filter(Exists(wanted))
    key = q.sort.lstrip("-")
    descending = q.sort.startswith("-")
    if key in ("found", "reviewed"):
        counted = Extraction.objects.filter(document_id=OuterRef("pk"), clause_type_id__in=q.columns)
        if key == "found":
            counted = counted.filter(status="found")
        else:
            counted = counted.filter(Exists(Review.objects.filter(extraction=OuterRef("pk"))))
        n = Subquery(
            counted.order_by()
            .values("document_id")
            .annotate(n=Count("clause_type_id", distinct=True))
            .values("n")[:1],
            output_field=IntegerField(),
        )
        docs = docs.annotate(grid_n=Coalesce(n, Value(0)))
        first = "-grid_n" if descending else "grid_n"
        return docs.order_by(first, Lower("title"), "id")
    if key == "date":
        return docs.order_by("-created_at" if descending else "created_at", "-id" if descending else "id")
    return docs.order_by(
        Lower("title").desc() if descending else Lower("title"), "-id" if descending else "id"
    )


@dataclass
class Row:
    document: Document
    cells: list[Cell | None]  # one per shown column, None: never extracted
    found: int = 0
    reviewed: int = 0
    not_found: int = 0
    unverified: int = 0
    html: str = ""  # the cells as HTML (reviewer.views.grid.cell_html)


def rows_of(page_docs: list[Document], q: GridQuery, kinds: dict[int, str]) -> list[Row]:
    """The rows of a page of documents: every answer of theirs for the shown types, in one query."""
    by_pair: dict[tuple[int, int], list[Answer]] = {}
    ids = [d.pk for d in page_docs]
    if ids and q.columns:
        for a in answers(Extraction.objects.filter(document_id__in=ids, clause_type_id__in=q.columns)):
            by_pair.setdefault((a.document_id, a.clause_type_id), []).append(a)
    rows = []
    for doc in page_docs:
        row = Row(doc, [])
        for ct in q.columns:
            found = by_pair.get((doc.pk, ct))
            cell = cell_of(found, kinds.get(ct, "text")) if found else None
            if cell is not None:
                cell.dim = not q.matches(cell)
                row.found += any(a.status == "found" for a in found or ())
                row.reviewed += any(a.decision for a in found or ())
                row.not_found += cell.status == "not_found"
                row.unverified += cell.status == "unverified"
            row.cells.append(cell)
        rows.append(row)
    return rows


def column_totals(docs: QuerySet, columns: list[int]) -> dict[int, int]:
    """For each shown type, how many of the kept documents (all pages) have it found."""
    return dict(
        Extraction.objects.filter(
            document_id__in=docs.order_by().values("pk"), clause_type_id__in=columns, status="found"
        )
        .order_by()
        .values_list("clause_type_id")
        .annotate(n=Count("document_id", distinct=True))
    )
