"""Cut a document into retrieval chunks that never split a sentence.

Input: the document text (pages joined by ``"\\f"``) and its page table. Output: ordered
:class:`ChunkSpec` rows whose ``text`` is *exactly* ``document_text[char_start:char_end]``,
because citations are character offsets into the document and must land on the source.

How a document is cut:

1. :mod:`ingest.blocks` splits the text into headings, paragraphs, tables and page furniture;
   :mod:`ingest.headings` gives each heading a level, from which the section path
   ("ARTICLE 5 > 5.2 Indemnification") is kept.
2. Paragraphs are split into sentences (:mod:`ingest.sentences`), tables into rows. These
   *units* are the atoms of a chunk. Only a single sentence (or row) too long for a chunk is
   cut inside, at clause punctuation or whitespace, as a last resort
   (:func:`ingest.sentences.split_oversized`).
3. Chunk boundaries are chosen for the whole document at once (dynamic programming over
   the units), at the least total cost: every chunk costs 1; starting one costs by what it
   starts at: a heading 0, an inline-titled clause 0.25, a paragraph 0.6, a sentence 2, a
   break after text that does not end a sentence (a list item ending in ",") 3, the inside
   of an over-long sentence 6; a heading inside a chunk costs 4 x the share of the chunk
   before it (a short section tail may share a chunk with the next section, a long one may
   not). So headings and paragraphs win whenever that costs at most about one extra chunk,
   and a sentence is cut only when it alone exceeds a chunk. A heading or a page-number
   line ends a chunk only when nothing else can fit.
4. A chunk that does not open with a heading starts with the last whole sentences of the
   text before it, as many as bring this overlap closest to ``overlap`` (15%) of the chunk
   and never above twice that, so a clause near a boundary is read whole by one of the two
   chunks. Legal sentences are long, so after a long one there is often no overlap; the
   packing prefers (cost 1) boundaries where there is one.

Size: a chunk is limited to ``max_chars`` (2,000) characters *and* ``max_tokens`` (600)
word pieces as estimated by :func:`estimate_wordpieces`, a conservative imitation of BERT's
tokenizer (punctuation marks are pieces, long words and numbers split), so dense text
(numbers, redaction marks, tables) stays bounded too. all-MiniLM-L6-v2 reads only 256 word
pieces at a time, so :mod:`ingest.embeddings` embeds a longer chunk as overlapping windows
(at most three at this size) and no text is left unembedded. Why 2,000: nearly every
lawyer-labelled clause lies whole inside one chunk at this size, and larger chunks cost the
offline engine silent-source and page accuracy (docs/decisions.md,
ingest.chunker.DEFAULT_MAX_CHARS); ``bench/chunk_quality.py --max-chars N`` shows the trade.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ingest.blocks import split_blocks
from ingest.headings import Heading
from ingest.pages import PageIndex, PageSpan
from ingest.sentences import sentence_spans, split_oversized

DEFAULT_MAX_CHARS = 2000
DEFAULT_MAX_TOKENS = 600  # estimated word pieces, [CLS]/[SEP] included: under three embedding windows
MAX_SECTION_CHARS = 500  # Chunk.section column width
CHUNK_ID_HEX = 24

# What a unit starts, weakest to strongest, and what starting a chunk there costs.
PIECE, SENTENCE, PARAGRAPH, CLAUSE, HEADING = 0, 1, 2, 3, 4
START_COST = {PIECE: 6.0, SENTENCE: 2.0, PARAGRAPH: 0.6, CLAUSE: 0.25, HEADING: 0.0}
CHUNK_COST = 1.0
NO_OVERLAP_COST = 1.0  # a chunk inside a section that starts without overlap
# A heading (or titled clause) inside a chunk costs this x the share of the chunk before it:
# the tail of a short section may share a chunk with the next one, a long one may not.
INSIDE_COST = {CLAUSE: 1.0, HEADING: 4.0}
MID_SENTENCE_COST = 3.0  # a paragraph or item break after text that does not end a sentence
GLUE_BREAK_COST = 100.0  # ending a chunk on a heading or page-number line: only if nothing else fits

SentenceSplitter = Callable[[str, int, int], list[tuple[int, int]]]

# Character classes for the word-piece estimate: letters "a", digits "0", space " ",
# anything else (punctuation, and every non-ASCII character) ".".
_CLASSES = bytes(
    ord("a")
    if chr(c).isascii() and chr(c).isalpha()
    else ord("0")
    if chr(c).isdigit() and c < 128
    else ord(" ")
    if chr(c) in " \t\n\r\x0b\x0c"
    else ord(".")
    for c in range(256)
)
_BLANK_LINE = re.compile(r"\n[ \t]*(?=\n)")
_PUNCTUATED_LINE_END = re.compile(r"[.;:,][ \t]*(?:\n|$)")
_LOWERCASE_LINE_START = re.compile(r"\n[ \t]*[a-z]")
_CLEAN_END = re.compile(r"[.!?;:][\"'”’)\]]*$")


@dataclass(frozen=True)
class ChunkSpec:
    chunk_id: str  # sha256 of the text (hex prefix); a repeat of the same text in one document is salted
    ordinal: int  # 0-based position in the document
    text: str  # == document_text[char_start:char_end]
    char_start: int
    char_end: int
    page_start: int  # physical page of char_start
    page_end: int  # physical page of the last character
    paragraph: int  # 1-based ¶ (heading/paragraph/table block) where the chunk's new text begins
    section: str  # heading path where the chunk's new text begins, "" before the first heading


@dataclass(slots=True)
class _Unit:
    start: int
    end: int
    kind: int  # what the unit starts: PIECE .. HEADING
    glued: bool  # a chunk should not end after this unit (a heading, page furniture)
    overlappable: bool  # a whole sentence or table row: may be repeated as overlap
    section: str
    paragraph: int
    tokens: int
    ends_clean: bool  # ends a sentence or clause (. ! ? ; :) or a table row


def estimate_wordpieces(text: str) -> int:
    """An upper-leaning estimate of the BERT WordPiece count of ``text`` (no specials).

    BERT splits on whitespace and on every punctuation character, then cuts words it does
    not know into pieces. Estimate: one piece per punctuation mark (and per non-ASCII
    character), one per word plus one per 7 of its letters, one per number plus one per 3
    of its digits. Counted with byte-level ``count`` calls over a class map of the text, which is
    faster than a regex. On contract chunks the real count seldom exceeds it, and then by little
    (docs/decisions.md, ingest.chunker.estimate_wordpieces).
    """
    c = text.encode("ascii", "replace").translate(_CLASSES)
    first = c[:1]
    words = c.count(b" a") + c.count(b".a") + c.count(b"0a") + (first == b"a")
    numbers = c.count(b" 0") + c.count(b".0") + c.count(b"a0") + (first == b"0")
    return words + c.count(b"aaaaaaa") + numbers + c.count(b"000") + c.count(b".")


def chunk_document(
    text: str,
    pages: Sequence[PageSpan],
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    overlap: float = 0.15,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    splitter: SentenceSplitter | None = None,
) -> list[ChunkSpec]:
    """Chunk ``text`` (see the module docstring). Deterministic: same input, same chunks.

    ``overlap`` is the share of a chunk to repeat from the text before it (whole
    sentences only, at most twice that share). ``max_tokens`` bounds the estimated word
    pieces of a chunk, the model's [CLS] and [SEP] included. ``splitter`` replaces the
    sentence splitter (for comparisons); it takes ``(text, start, end)`` and returns
    trimmed ``(start, end)`` spans.
    """
    if max_chars < 50 or max_tokens < 16:
        raise ValueError("max_chars must be at least 50 and max_tokens at least 16")
    if not 0 <= overlap < 0.5:
        raise ValueError("overlap must be in [0, 0.5)")
    units = _units(text, max_chars, max_tokens - 2, splitter or sentence_spans)
    if not units:
        return []
    spans = _pack(units, max_chars, max_tokens - 2, overlap)
    page_index = PageIndex(pages)
    chunks: list[ChunkSpec] = []
    seen: dict[str, int] = {}
    for ordinal, (first, new, last) in enumerate(spans):
        start, end = units[first].start, units[last].end
        chunk_text = text[start:end]
        chunks.append(
            ChunkSpec(
                chunk_id=_chunk_id(chunk_text, seen),
                ordinal=ordinal,
                text=chunk_text,
                char_start=start,
                char_end=end,
                page_start=page_index.page_of(start),
                page_end=page_index.page_of(end - 1),
                paragraph=units[new].paragraph,
                section=units[new].section,
            )
        )
    return chunks


def _chunk_id(chunk_text: str, seen: dict[str, int]) -> str:
    """sha256 of the text; the n-th repeat of the same text in a document is salted with n."""
    digest = hashlib.sha256(chunk_text.encode("utf-8")).hexdigest()[:CHUNK_ID_HEX]
    repeat = seen.get(digest, 0)
    seen[digest] = repeat + 1
    if repeat == 0:
        return digest
    salted = f"{chunk_text}\x00{repeat}".encode()
    return hashlib.sha256(salted).hexdigest()[:CHUNK_ID_HEX]


def section_starts(text: str) -> list[tuple[int, str]]:
    """(offset, section path) at each heading of ``text``, in order: the path in force from that offset on,
    as :func:`chunk_document` records it. The section of any offset is the last entry at or before it
    (a quote's own section, where its chunk may have started in the section before)."""
    path = _SectionPath()
    return [
        (block.start, path.enter(block.heading))
        for block in split_blocks(text)
        if block.kind != "furniture" and block.heading is not None
    ]


class _SectionPath:
    """The headings in force: entering a heading closes those of its level and deeper."""

    def __init__(self) -> None:
        self.path: list[Heading] = []

    def enter(self, heading: Heading) -> str:
        while self.path and self.path[-1].level >= heading.level:
            self.path.pop()
        self.path.append(heading)
        return " > ".join(h.label for h in self.path)[:MAX_SECTION_CHARS]


# --- units ------------------------------------------------------------------------------


def _units(text: str, max_chars: int, max_tokens: int, splitter: SentenceSplitter) -> list[_Unit]:
    units: list[_Unit] = []
    enter = _SectionPath().enter
    section = ""
    paragraph = 0

    def add(
        spans: list[tuple[int, int]], first_kind: int, glued: bool, overlappable: bool, table: bool = False
    ) -> None:
        """Append the units of ``spans``; the first starts ``first_kind``, the rest sentences."""
        kind = first_kind
        for s, e in spans:
            tokens = estimate_wordpieces(text[s:e])
            if (e - s > max_chars or tokens > max_tokens) and not table and _is_list_of_lines(text, s, e):
                # a run of short unpunctuated lines (a list, a table without pipes): one unit per line
                add(_rows(text, s, e), kind, glued, overlappable, table=True)
                kind = SENTENCE
                continue
            if e - s <= max_chars and tokens <= max_tokens:
                clean = table or bool(_CLEAN_END.search(text, max(s, e - 4), e))
                units.append(_Unit(s, e, kind, glued, overlappable, section, paragraph, tokens, clean))
            else:
                for k, (ps, pe) in enumerate(_cut(text, s, e, max_chars, max_tokens, tokens)):
                    piece_tokens = estimate_wordpieces(text[ps:pe])
                    units.append(
                        _Unit(
                            ps,
                            pe,
                            kind if k == 0 else PIECE,
                            glued,
                            False,
                            section,
                            paragraph,
                            piece_tokens,
                            False,
                        )
                    )
            kind = SENTENCE

    for block in split_blocks(text):
        if block.kind == "furniture":
            add([(block.start, block.end)], PARAGRAPH, True, False)
            continue
        paragraph += 1
        if block.kind == "heading":
            assert block.heading is not None  # a heading block always carries its Heading
            section = enter(block.heading)
            add([(block.start, block.end)], HEADING, True, False)
            continue
        kind = PARAGRAPH
        if block.heading is not None:  # "5.2 Indemnification. Each party ..."
            section = enter(block.heading)
            kind = CLAUSE
        if block.kind == "table":
            add(_rows(text, block.start, block.end), kind, False, True, table=True)
        else:
            add(splitter(text, block.start, block.end), kind, False, True)
    return units


def _is_list_of_lines(text: str, s: int, e: int) -> bool:
    """Whether ``text[s:e]`` is a list or table set as lines rather than wrapped prose.

    At least 4 lines; most end without punctuation; and hardly any line reads on from the
    one before (starts in lower case), which is what wrapped prose does all the time.
    """
    lines = text.count("\n", s, e) + 1 - len(_BLANK_LINE.findall(text, s, e))
    if lines < 4:
        return False
    punctuated = len(_PUNCTUATED_LINE_END.findall(text, s, e))
    run_on = len(_LOWERCASE_LINE_START.findall(text, s, e))
    return lines - punctuated >= 0.75 * lines and run_on <= 0.1 * lines


def _cut(text: str, s: int, e: int, max_chars: int, max_tokens: int, tokens: int) -> list[tuple[int, int]]:
    """Split an over-long sentence so each piece fits both limits (last resort)."""
    limit = max_chars if tokens <= max_tokens else max(8, min(max_chars, (e - s) * max_tokens // tokens))
    while True:
        pieces = split_oversized(text, s, e, limit)
        if all(estimate_wordpieces(text[a:b]) <= max_tokens for a, b in pieces) or limit <= 8:
            return pieces
        limit = max(8, int(limit * 0.8))


def _rows(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Each line of a Markdown table block as a span."""
    rows: list[tuple[int, int]] = []
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        s, e = pos, stop
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            rows.append((s, e))
        pos = stop + 1
    return rows


# --- packing ----------------------------------------------------------------------------


def _pack(units: list[_Unit], max_chars: int, max_tokens: int, ratio: float) -> list[tuple[int, int, int]]:
    """Choose chunks as ``(first unit incl. overlap, first new unit, last unit)`` triples.

    ``cost[e]`` is the cheapest way to chunk units ``[0, e)`` with a chunk ending at ``e``.
    A chunk whose new text starts at unit ``b`` takes as overlap the whole sentences just
    before ``b`` that bring the overlap closest to ``ratio`` of the chunk (never above
    twice that). The overlap is not given up to squeeze in more new text: a chunk is full
    when the best overlap no longer fits, unless its first new unit alone needs the room.
    """
    n = len(units)
    inf = float("inf")
    cost = [inf] * (n + 1)
    back = [0] * (n + 1)
    first_of = [0] * (n + 1)
    cost[0] = 0.0
    tok = [0] * (n + 1)  # prefix sums of estimated word pieces
    for k, u in enumerate(units):
        tok[k + 1] = tok[k] + u.tokens
    reach = 2 * ratio * max_chars
    ideal = ratio / (1 - ratio)  # overlap / new text when the overlap is `ratio` of the chunk
    ceiling = 2 * ratio / (1 - 2 * ratio)

    starts = [u.start for u in units]
    ends = [u.end for u in units]
    kinds = [u.kind for u in units]
    for b in range(n):
        if cost[b] == inf:
            continue
        candidates = _overlap_candidates(units, b, reach, floor=back[b] + 1 if b > 0 else 0)
        base = cost[b] + CHUNK_COST + _start_cost(units, b)
        b_start = starts[b]
        lengths = [b_start - starts[k] for k in candidates]  # increasing
        inside = 0.0  # cost of headings and titled clauses inside the chunk
        for e in range(b + 1, n + 1):
            end = ends[e - 1]
            new_chars = end - b_start
            if (new_chars > max_chars or tok[e] - tok[b] > max_tokens) and e > b + 1:
                break  # (a single unit always fits: _units cut the long ones)
            first = b
            if lengths:
                # overlap o makes up o / (o + new_chars) of the chunk: aim at `ratio`, cap at twice it
                target = ideal * new_chars
                cap = ceiling * new_chars
                best_gap = inf  # any overlap under the cap beats none
                for k, o in zip(candidates, lengths):
                    if o > cap:
                        break
                    gap = o - target if o > target else target - o
                    if gap < best_gap:
                        first, best_gap = k, gap
                    elif o > target:
                        break
            if first < b and (end - starts[first] > max_chars or tok[e] - tok[first] > max_tokens):
                if e > b + 1:
                    break  # full: the overlap no longer fits
                while first < b and (end - starts[first] > max_chars or tok[e] - tok[first] > max_tokens):
                    first += 1  # a big first unit: shrink the overlap to make room
            kind = kinds[e - 1]
            if kind >= CLAUSE and e > b + 1:
                inside += INSIDE_COST[kind] * (starts[e - 1] - b_start) / max_chars
            total = base + inside
            if first == b and candidates is not _NONE:
                total += NO_OVERLAP_COST
            if total < cost[e]:
                cost[e], back[e], first_of[e] = total, b, first
    chunks: list[tuple[int, int, int]] = []
    e = n
    while e > 0:
        b = back[e]
        chunks.append((first_of[e], b, e - 1))
        e = b
    chunks.reverse()
    return chunks


_NONE: list[int] = []  # no overlap wanted (document start, or a heading opens the chunk)


def _overlap_candidates(units: list[_Unit], b: int, reach: float, floor: int) -> list[int]:
    """Units that may open the overlap in front of unit ``b``, nearest first.

    Whole sentences or table rows right before ``b``, within ``reach`` characters, never
    reaching back to ``floor`` (the previous chunk keeps text of its own). None in front of
    a heading or at the start of the document.
    """
    if b == 0 or units[b].kind == HEADING:
        return _NONE
    found: list[int] = []
    k = b - 1
    b_start = units[b].start
    while k >= floor and units[k].overlappable and b_start - units[k].start <= reach:
        found.append(k)
        k -= 1
    return found


def _start_cost(units: list[_Unit], b: int) -> float:
    """What it costs to start a chunk at unit ``b`` (and so end the previous one before it)."""
    if b == 0:
        return 0.0
    kind = units[b].kind
    cost = START_COST[kind]
    before = units[b - 1]
    if before.glued:
        cost += GLUE_BREAK_COST
    elif kind < CLAUSE and not before.ends_clean:
        cost = max(cost, MID_SENTENCE_COST)  # e.g. between "(a) ...," and "(b) ..." list items
    return cost
