"""A clause with its citations and reviews in one query (PostgreSQL JSON arrays).

The clause-click fragment is the hot path: instead of one query for the extraction, one for
its citations and one for its history, the extraction row carries both lists as JSON
(``ARRAY(SELECT json_build_object(...))``), read back into small read-only rows. The SQL is
written out: building it from ORM expressions cost more CPU than running it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet
from django.db.models.expressions import RawSQL

from reviewer.models import Review
from reviewer.states import STATE_LABELS, decision_label


@dataclass(frozen=True)
class ChunkRef:
    chunk_id: str
    section: str


@dataclass(frozen=True)
class CitationRow:
    id: int
    ordinal: int
    page: int
    start: int
    end: int
    quote: str
    chunk: ChunkRef

    @property
    def pk(self) -> int:
        return self.id


@dataclass(frozen=True)
class ReviewerRef:
    username: str
    full_name: str = ""

    def get_username(self) -> str:
        return self.username

    def get_full_name(self) -> str:
        return self.full_name

    def __str__(self) -> str:
        return self.username


@dataclass(frozen=True)
class ReviewRow:
    id: int
    decision: str
    corrected_text: str
    reason: str
    extraction_version: int
    created_at: datetime
    reviewer: ReviewerRef

    @property
    def pk(self) -> int:
        return self.id

    def get_decision_display(self) -> str:
        return dict(Review.Decision.choices)[self.decision]

    @property
    def decision_label(self) -> str:
        """As ``Review.decision_label``."""
        return decision_label(self.decision, self.corrected_text, self.get_decision_display())

    @property
    def label(self) -> str:
        return STATE_LABELS[self.decision]


# Fixed SQL (no expression compiling on the hot path); "extraction_extraction" is the outer row.
CITATIONS_SQL = """ARRAY(
  SELECT json_build_object('id', c.id, 'ordinal', c.ordinal, 'page', c.page, 'start', c.start, 'end', c."end",
                           'quote', c.quote, 'chunk_id', ch.chunk_id, 'section', ch.section)
  FROM extraction_citation c JOIN ingest_chunk ch ON ch.id = c.chunk_id
  WHERE c.extraction_id = "extraction_extraction"."id" ORDER BY c.ordinal, c.id)"""
REVIEWS_SQL = """ARRAY(
  SELECT json_build_object('id', r.id, 'decision', r.decision, 'corrected_text', r.corrected_text,
                           'reason', r.reason, 'extraction_version', r.extraction_version,
                           'created_at', r.created_at, 'username', u.username, 'first_name', u.first_name,
                           'last_name', u.last_name)
  FROM reviewer_review r JOIN auth_user u ON u.id = r.reviewer_id
  WHERE r.extraction_id = "extraction_extraction"."id" ORDER BY r.id DESC)"""


# The page texts around one citation (the given one, else the clause's first): its page(s) and
# one page either side, each sliced out of Document.text. ``last_page`` is the page its span ends on
# (a clause may run on from the foot of one page): the page after that one is shown too.
PAGES_SQL = """ARRAY(
  SELECT json_build_object('citation_id', fc.id, 'number', p.number, 'start', p.char_start, 'end', p.char_end,
                           'text', substr(d.text, p.char_start + 1, p.char_end - p.char_start),
                           'ocr', p.ocr_confidence)
  FROM (SELECT c.id, c.page, c.start, c."end",
               (SELECT max(lp.number) FROM ingest_page lp
                WHERE lp.document_id = "extraction_extraction"."document_id"
                  AND lp.char_start < c."end") AS last_page
        FROM extraction_citation c
        WHERE c.extraction_id = "extraction_extraction"."id" AND (c.id = %s OR %s = 0)
        ORDER BY c.ordinal, c.id LIMIT 1) fc
  JOIN ingest_page p ON p.document_id = "extraction_extraction"."document_id"
       AND (p.number BETWEEN fc.page - 1 AND greatest(fc.page, fc.last_page) + 1
            OR (p.char_start < fc."end" AND p.char_end > fc.start))
  JOIN ingest_document d ON d.id = p.document_id
  ORDER BY p.number)"""


def with_rows(extractions: QuerySet, *, pages_for: int | None = None) -> QuerySet:
    """Annotate ``citation_rows_json`` (reading order), ``review_rows_json`` (newest first) and, with
    ``pages_for`` (a citation id, or 0 for the clause's first citation), ``page_rows_json``."""
    extractions = extractions.annotate(
        citation_rows_json=RawSQL(CITATIONS_SQL, ()), review_rows_json=RawSQL(REVIEWS_SQL, ())
    )
    if pages_for is not None:
        extractions = extractions.annotate(page_rows_json=RawSQL(PAGES_SQL, (pages_for, pages_for)))
    return extractions


def citation_rows(extraction) -> list[CitationRow]:
    return [
        CitationRow(
            c["id"],
            c["ordinal"],
            c["page"],
            c["start"],
            c["end"],
            c["quote"],
            ChunkRef(c["chunk_id"], c["section"] or ""),
        )
        for c in extraction.citation_rows_json or []
    ]


def page_rows(extraction, citation_id: int) -> list[tuple[int, int, int, str, float | None]] | None:
    """Preloaded (number, start, end, text, OCR confidence or None) around ``citation_id``; None when not
    preloaded for it."""
    rows = getattr(extraction, "page_rows_json", None)
    if not rows or rows[0]["citation_id"] != citation_id:
        return None
    return [(r["number"], r["start"], r["end"], r["text"] or "", r.get("ocr")) for r in rows]


def review_rows(extraction) -> list[ReviewRow]:
    return [
        ReviewRow(
            r["id"],
            r["decision"],
            r["corrected_text"],
            r["reason"],
            r["extraction_version"],
            datetime.fromisoformat(r["created_at"]),
            ReviewerRef(r["username"], f"{r['first_name'] or ''} {r['last_name'] or ''}".strip()),
        )
        for r in extraction.review_rows_json or []
    ]
