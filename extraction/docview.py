"""A document as the extraction cores see it: plain data loaded once from the database.

Its vocabulary is ingest's: pages are ``ingest.pages.PageSpan`` rows (``page_of`` maps an offset to
its page), chunks are ``ingest.chunker.ChunkSpec`` records, ``chunk.text ==
text[chunk.char_start:chunk.char_end]``.

``DocumentView`` carries the text (pages joined by ``\\f``), the page table and the
chunks in reading order, so the pure cores (context, verify, agent tools, offline
engine) never touch the ORM.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property

from ingest.blocks import furniture_spans
from ingest.chunker import ChunkSpec
from ingest.pages import PageSpan, spans_from_text


@dataclass(frozen=True)
class DocumentView:
    id: int
    source: str
    text: str
    pages: tuple[PageSpan, ...]
    chunks: tuple[ChunkSpec, ...]
    doc_type: str = ""
    engagement_id: int | None = field(default=None, compare=False)
    chunk_pks: Mapping[str, int] = field(
        default_factory=dict, compare=False
    )  # chunk id -> its row (a citation's)

    @cached_property
    def by_id(self) -> dict[str, ChunkSpec]:
        return {c.chunk_id: c for c in self.chunks}

    @cached_property
    def furniture(self) -> list[tuple[int, int]]:
        """Spans of the running headers/footers and page numbers: never an answer, and skipped when a
        quote reads across a page break."""
        return furniture_spans(self.text)


@dataclass(frozen=True)
class ScoredChunk:
    """A retrieved chunk with its retrieval scores.

    ``score`` is whatever the retriever ranked by (e.g. an RRF fused score); ``cosine`` is the
    query/chunk embedding cosine similarity when known.
    """

    chunk: ChunkSpec
    score: float = 0.0
    cosine: float | None = None


def chunk_view(row) -> ChunkSpec:
    """``ingest.Chunk`` row -> ChunkSpec."""
    return ChunkSpec(
        row.chunk_id,
        row.ordinal,
        row.text,
        row.char_start,
        row.char_end,
        row.page_start,
        row.page_end,
        row.paragraph,
        row.section or "",
    )


# the columns of a chunk row that make its ChunkSpec, in the record's order
CHUNK_FIELDS = tuple(f.name for f in fields(ChunkSpec))


def load_document(document) -> DocumentView:
    """Load an ``ingest.Document`` with its pages and chunks: one query each, plain values only
    (never the embeddings or search vectors, and no field left to load row by row)."""
    pages = tuple(document.pages.order_by("number").values_list("number", "char_start", "char_end"))
    rows = tuple(document.chunks.order_by("ordinal").values_list(*CHUNK_FIELDS, "id", named=True))
    chunks = tuple(chunk_view(row) for row in rows)
    return DocumentView(
        document.pk,
        document.original_name or document.title,
        document.text,
        tuple(PageSpan(*p) for p in pages) or tuple(spans_from_text(document.text)),
        chunks,
        document.doc_type or "",
        document.engagement_id,
        {row.chunk_id: row.id for row in rows},
    )
