"""A document as the extraction cores see it: plain data loaded once from the database.

``DocumentView`` carries the text (pages joined by ``\\f``), the page table and the
chunks in reading order, so the pure cores (context, verify, agent tools, offline
engine) never touch the ORM.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping

from extraction.types import ChunkView, PageSpan


@dataclass(frozen=True)
class DocumentView:
    id: int
    source: str
    text: str
    pages: tuple[PageSpan, ...]
    chunks: tuple[ChunkView, ...]
    doc_type: str = ""
    engagement_id: int | None = field(default=None, compare=False)
    chunk_pks: Mapping[str, int] = field(default_factory=dict, compare=False)  # chunk id -> its row (a citation's)

    @cached_property
    def by_id(self) -> dict[str, ChunkView]:
        return {c.chunk_id: c for c in self.chunks}

    @cached_property
    def furniture(self) -> list[tuple[int, int]]:
        """Spans of the running headers/footers and page numbers: never an answer, and skipped when a
        quote reads across a page break."""
        from ingest.blocks import furniture_spans

        return furniture_spans(self.text)


def chunk_view(row) -> ChunkView:
    """``ingest.Chunk`` row -> ChunkView."""
    return ChunkView(row.chunk_id, row.ordinal, row.text, row.char_start, row.char_end, row.page_start,
                     row.page_end, row.paragraph, row.section or "")


def page_table_from_text(text: str) -> tuple[PageSpan, ...]:
    """Pages from the ``\\f`` breaks, when no Page rows exist (the ``\\f`` belongs to no page)."""
    out, start = [], 0
    for n, part in enumerate(text.split("\f"), 1):
        out.append((n, start, start + len(part)))
        start += len(part) + 1
    return tuple(out)


CHUNK_FIELDS = ("chunk_id", "ordinal", "text", "char_start", "char_end", "page_start", "page_end", "paragraph",
                "section")


def load_document(document) -> DocumentView:
    """Load an ``ingest.Document`` with its pages and chunks: one query each, plain values only
    (never the embeddings or search vectors, and no field left to load row by row)."""
    pages = tuple(document.pages.order_by("number").values_list("number", "char_start", "char_end"))
    rows = tuple(document.chunks.order_by("ordinal").values_list(*CHUNK_FIELDS, "id", named=True))
    chunks = tuple(chunk_view(row) for row in rows)
    return DocumentView(document.pk, document.original_name or document.title, document.text,
                        pages or page_table_from_text(document.text), chunks, document.doc_type or "",
                        document.engagement_id, {row.chunk_id: row.id for row in rows})
