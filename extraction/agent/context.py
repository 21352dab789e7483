"""Context assembly: what part of a document enters a prompt, with provenance.

- A document under ``WHOLE_DOC_MAX_CHARS`` (12,000) goes in whole.
- Above that, the full document never enters a prompt:
  - whole-document tasks (doc-type classification, case summary) use section
    extraction when the chunks carry at least 3 distinct headings (the opening
    that no heading covers first, since a contract names itself, its parties and
    its date there; then priority Abstract, Summary, Conclusion, Results,
    Introduction, Discussion, Methods, Background, then document order, within a
    character budget), otherwise the opening chunk and the chunks the caller
    retrieved for the task (``extraction.agent.whole_document``), or with none the
    document's opening alone (mode "opening");
  - a clause question uses the caller's top-K retrieved chunks (K=5), re-sorted
    to reading order.

Overlapping chunks are merged by showing each character once: a chunk's block
starts where the previous block ended, so every block still names exactly one
chunk id (the one to cite) and the blocks of a run read as continuous text.
Every block carries a provenance tag (see ``provenance``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from extraction.agent.provenance import ProvenanceTag, join_blocks, render_block
from extraction.docview import ScoredChunk
from ingest.chunker import ChunkSpec
from ingest.pages import PageTable, pages_of_span

WHOLE_DOC_MAX_CHARS = 12_000
DEFAULT_K = 5
SECTION_BUDGET_CHARS = 12_000
OPENING_CHARS = 2_000  # of the section budget, for the text before the first heading
MIN_HEADINGS = 3
# The turn note is re-sent, uncached, with every request of a document's session, and a long
# contract's session reads hundreds of chunks over its clause questions: it names the latest only.
NOTE_CHUNKS = 40
SECTION_PRIORITY = (
    "abstract",
    "summary",
    "conclusion",
    "results",
    "introduction",
    "discussion",
    "methods",
    "background",
)


@dataclass(frozen=True)
class ContextBlock:
    chunk_id: str
    text: str  # == document_text[char_start:char_end]
    char_start: int
    char_end: int
    tag: ProvenanceTag

    def render(self) -> str:
        return render_block(self.tag, self.text)


@dataclass(frozen=True)
class ContextPack:
    mode: str  # "whole" | "sections" | "retrieval"
    blocks: tuple[ContextBlock, ...]

    @property
    def text(self) -> str:
        return join_blocks([b.render() for b in self.blocks])

    @property
    def chunk_ids(self) -> list[str]:
        return list(dict.fromkeys(b.chunk_id for b in self.blocks))

    @property
    def chars(self) -> int:
        return sum(len(b.text) for b in self.blocks)


def _as_chunk(c: ChunkSpec | ScoredChunk) -> ChunkSpec:
    return c.chunk if isinstance(c, ScoredChunk) else c


def segment_blocks(
    chunks: Sequence[ChunkSpec], *, source: str, pages: PageTable | None = None, max_chars: int | None = None
) -> list[ContextBlock]:
    """Chunks in reading order, overlaps shown once, one tagged block per chunk.

    A chunk wholly inside text already shown adds no block. ``max_chars`` stops
    (cutting the last block short) once that much text is in.
    """
    blocks: list[ContextBlock] = []
    shown_end = -1
    used = 0
    for c in sorted(chunks, key=lambda c: (c.char_start, c.char_end)):
        start = max(c.char_start, shown_end)
        if start >= c.char_end:
            continue
        text = c.text[start - c.char_start :]
        if max_chars is not None:
            room = max_chars - used
            if room <= 0:
                break
            text = text[:room]
        end = start + len(text)
        p1, p2 = pages_of_span(start, end, pages) if pages else (c.page_start, c.page_end)
        tag = ProvenanceTag(source, (c.chunk_id,), p1, p2, c.paragraph, c.section, start)
        blocks.append(ContextBlock(c.chunk_id, text, start, end, tag))
        shown_end = end
        used += len(text)
    return blocks


def clause_context(
    retrieved: Sequence[ChunkSpec | ScoredChunk],
    *,
    source: str,
    pages: PageTable | None = None,
    k: int = DEFAULT_K,
) -> ContextPack:
    """Context for one clause question: the first ``k`` retrieved chunks (the caller's
    ranking), re-sorted to reading order, overlaps merged, each block tagged."""
    top = [_as_chunk(c) for c in list(retrieved)[:k]]
    return ContextPack("retrieval", tuple(segment_blocks(top, source=source, pages=pages)))


def headings(chunks: Sequence[ChunkSpec]) -> list[str]:
    """Distinct non-empty section headings in document order."""
    seen: dict[str, None] = {}
    for c in sorted(chunks, key=lambda c: c.char_start):
        h = " ".join((c.section or "").split())
        if h:
            seen.setdefault(h, None)
    return list(seen)


def _priority(heading: str) -> int:
    words = re.findall(r"[a-z]+", heading.lower())
    for rank, key in enumerate(SECTION_PRIORITY):
        if any(w == key or w.startswith(key) for w in words):
            return rank
    return len(SECTION_PRIORITY)


def section_context(
    chunks: Sequence[ChunkSpec],
    *,
    source: str,
    pages: PageTable | None = None,
    budget_chars: int = SECTION_BUDGET_CHARS,
) -> ContextPack:
    """Section extraction: the opening (the first chunk when no heading covers it, at most
    ``OPENING_CHARS``), then sections by priority then document order, within the budget, shown
    in reading order. The opening is read because text before the first heading (title, parties)
    belongs to no section (docs/decisions.md, extraction.agent.context.OPENING_CHARS)."""
    ordered = sorted(chunks, key=lambda c: (c.char_start, c.char_end))
    sections: dict[str, list[ChunkSpec]] = {}
    for c in ordered:
        sections.setdefault(" ".join((c.section or "").split()), []).append(c)
    position = {h: i for i, h in enumerate(headings(ordered))}
    order = sorted((h for h in sections if h), key=lambda h: (_priority(h), position[h]))
    lead = ordered[:1] if ordered and not " ".join((ordered[0].section or "").split()) else []
    opening = segment_blocks(lead, source=source, pages=pages, max_chars=min(OPENING_CHARS, budget_chars))
    chosen: list[ChunkSpec] = [_cut_at(lead[0], opening[-1].char_end)] if opening else []
    used = sum(len(b.text) for b in opening)
    for h in order:
        if used >= budget_chars:
            break
        blocks = segment_blocks(sections[h], source=source, pages=pages, max_chars=budget_chars - used)
        if not blocks:
            continue
        used += sum(len(b.text) for b in blocks)
        ends = {b.chunk_id: b.char_end for b in blocks}
        chosen.extend(
            _cut_at(c, ends[c.chunk_id])
            for c in sections[h]
            if c.chunk_id in ends and all(c.chunk_id != x.chunk_id for x in chosen)
        )
    # re-render all chosen chunks together so overlaps between sections are shown once; each chunk
    # keeps the cut its section got, so the budget drops the sections chosen last, not those read last
    blocks = segment_blocks(chosen, source=source, pages=pages, max_chars=budget_chars)
    return ContextPack("sections", tuple(blocks))


def _cut_at(chunk: ChunkSpec, end: int) -> ChunkSpec:
    """``chunk`` ending at ``end`` (no later than its own end)."""
    end = min(end, chunk.char_end)
    return replace(chunk, text=chunk.text[: end - chunk.char_start], char_end=end)


def whole_document_context(
    document_text: str,
    chunks: Sequence[ChunkSpec],
    *,
    source: str,
    pages: PageTable | None = None,
    budget_chars: int = SECTION_BUDGET_CHARS,
    retrieved: Sequence[ChunkSpec | ScoredChunk] | None = None,
    k: int = DEFAULT_K,
) -> ContextPack:
    """Context for a whole-document task (doc-type classification, case summary).

    Short documents go in whole (as chunk blocks covering the full text, so every
    part stays citable). Long ones never do: sections if there are at least 3
    headings, else the opening chunk and the top ``k`` retrieved chunks, else
    (nothing retrieved) the opening of the document up to the budget.
    """
    mode = whole_document_mode(document_text, chunks)
    if mode == "whole":
        blocks = segment_blocks(chunks, source=source, pages=pages)
        if _uncovered(document_text, blocks):  # chunks missing: fall back to one raw block
            n1, n2 = pages_of_span(0, len(document_text), pages) if pages else (1, 1)
            tag = ProvenanceTag(source, (), n1, n2, 0, "", 0)
            blocks = [ContextBlock("", document_text, 0, len(document_text), tag)]
        return ContextPack("whole", tuple(blocks))
    if mode == "sections":
        return section_context(chunks, source=source, pages=pages, budget_chars=budget_chars)
    if retrieved:
        top = [_as_chunk(c) for c in list(retrieved)[:k]]
        opening = min(chunks, key=lambda c: (c.char_start, c.char_end), default=None)
        if opening is not None and opening.chunk_id not in {c.chunk_id for c in top}:
            top.insert(0, opening)  # the title, the parties and the date
        return ContextPack(
            "retrieval", tuple(segment_blocks(top, source=source, pages=pages, max_chars=budget_chars))
        )
    return ContextPack(
        "opening", tuple(segment_blocks(chunks, source=source, pages=pages, max_chars=budget_chars))
    )


def whole_document_mode(document_text: str, chunks: Sequence[ChunkSpec]) -> str:
    """How a whole-document task reads this document: "whole", "sections" or "retrieval"."""
    if len(document_text) < WHOLE_DOC_MAX_CHARS:
        return "whole"
    return "sections" if len(headings(chunks)) >= MIN_HEADINGS else "retrieval"


def _uncovered(document_text: str, blocks: Sequence[ContextBlock]) -> bool:
    """True when some non-whitespace text of the document is in no block."""
    pos = 0
    for b in blocks:
        if document_text[pos : b.char_start].strip():
            return True
        pos = max(pos, b.char_end)
    return bool(document_text[pos:].strip())


def turn_note(
    tokens_used: int, tokens_available: int, chunks_read: Sequence[str], limit: int = NOTE_CHUNKS
) -> str:
    """The per-turn system note: budget and what has been read (the latest ``limit`` chunk ids,
    ``chunks_read`` being in the order they were read, and how many in all)."""
    total = tokens_used + tokens_available
    share = f" ({100 * tokens_used / total:.0f}% of {total:,})" if total > 0 else ""
    ids = list(dict.fromkeys(chunks_read))
    read = ", ".join(ids[-limit:]) if ids else "none yet"
    count = f"{len(ids)}, the latest {limit}" if len(ids) > limit else f"{len(ids)}"
    return (
        f"[turn note] tokens used: {tokens_used:,}{share}; available: {tokens_available:,}. "
        f"Chunks read so far ({count}): {read}."
    )
