"""Plain data shared by the pure extraction cores (no Django).

`ChunkView` is a read-only picture of an ``ingest.Chunk`` row; the page table is
the document-level list of ``(number, char_start, char_end)`` triples built by
the converter. ``chunk.text == document_text[chunk.char_start:chunk.char_end]``.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Sequence

# One physical page: (1-based page number, absolute char_start, absolute char_end (exclusive)).
PageSpan = tuple[int, int, int]
PageTable = Sequence[PageSpan]


@dataclass(frozen=True)
class ChunkView:
    """One chunk of a document, as the extraction cores see it."""

    chunk_id: str
    ordinal: int
    text: str
    char_start: int
    char_end: int
    page_start: int
    page_end: int
    paragraph: int
    section: str


@dataclass(frozen=True)
class ScoredChunk:
    """A retrieved chunk with its retrieval scores.

    ``score`` is whatever the retriever ranked by (e.g. an RRF fused score);
    ``cosine`` is the query/chunk embedding cosine similarity when known.
    """

    chunk: ChunkView
    score: float = 0.0
    cosine: float | None = None


def page_of(offset: int, pages: PageTable) -> int:
    """Page number of an absolute character offset.

    The page whose ``[char_start, char_end)`` range contains ``offset``. An offset in
    a gap between pages (e.g. on the ``\\f`` itself) belongs to the page before it;
    one before the first page belongs to the first; past the end, to the last.
    Raises ``ValueError`` on an empty page table.
    """
    if not pages:
        raise ValueError("empty page table")
    ordered = sorted(pages, key=lambda p: p[1])
    starts = [p[1] for p in ordered]
    i = bisect.bisect_right(starts, offset) - 1
    return ordered[max(i, 0)][0]


def pages_of_span(start: int, end: int, pages: PageTable) -> tuple[int, int]:
    """(first, last) page of the half-open span ``[start, end)``."""
    first = page_of(start, pages)
    last = page_of(max(start, end - 1), pages)
    return first, last
