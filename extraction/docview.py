"""A document as the extraction cores see it: plain data loaded once from the database.

``DocumentView`` carries the text (pages joined by ``\\f``), the page table and the
chunks in reading order, so the pure cores (context, verify, agent tools, offline
engine) never touch the ORM.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

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

    @cached_property
    def by_id(self) -> dict[str, ChunkView]:
        return {c.chunk_id: c for c in self.chunks}


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


def load_document(document) -> DocumentView:
    """Load an ``ingest.Document`` with its pages and chunks."""
    pages = tuple((p.number, p.char_start, p.char_end)
                  for p in document.pages.order_by("number").only("number", "char_start", "char_end"))
    chunks = tuple(chunk_view(c) for c in document.chunks.order_by("ordinal").defer("embedding", "search"))
    return DocumentView(document.pk, document.original_name or document.title, document.text,
                        pages or page_table_from_text(document.text), chunks, document.doc_type or "",
                        document.engagement_id)
