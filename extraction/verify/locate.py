"""Locating a quote in the cited chunk (and its overlapping neighbours), after normalisation; and a
reviewer's text in the whole document (``find_passage``). Pure."""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from extraction.verify.normalise import norm, normalise, spelling_pattern
from extraction.verify.values import _DIGIT_AFTER, _PERCENT_AFTER, _SIGN_BEFORE
from ingest.chunker import ChunkSpec

_SHOW = 160  # chars of a quote/passage shown in an error


def find_passage(document_text: str, text: str, near: int = 0) -> tuple[int, int] | None:
    """Where ``text`` (a reviewer's corrected clause) stands in the document, its whitespace and quote and
    dash forms aside (``spelling_pattern``): of several places, the one starting nearest ``near`` (where
    the clause was cited), the first of equals; None when it is not there as typed."""
    pattern = spelling_pattern(text)
    places = [m.span() for m in re.finditer(pattern, document_text)] if pattern else []
    return min(places, key=lambda span: abs(span[0] - near)) if places else None


def _index(chunks) -> dict[str, ChunkSpec]:
    if isinstance(chunks, Mapping):
        return dict(chunks)
    return {c.chunk_id: c for c in chunks}


def _window(
    chunk: ChunkSpec, chunks: Mapping[str, ChunkSpec], lo: int, hi: int, document_text: str | None
) -> tuple[str, int]:
    """Contiguous source text covering ``[lo, hi)`` around ``chunk``: (text, absolute base).

    Cut from ``document_text`` when given, else stitched from the overlapping
    chunks (``chunk.text == document_text[char_start:char_end]``); it stops at a
    gap in chunk coverage.
    """
    lo, hi = min(lo, chunk.char_start), max(hi, chunk.char_end)
    if document_text is not None:
        lo, hi = max(lo, 0), min(hi, len(document_text))
        return document_text[lo:hi], lo
    near = sorted(
        (c for c in chunks.values() if c.char_end > lo and c.char_start < hi),
        key=lambda c: (c.char_start, c.char_end),
    )
    start, end = chunk.char_start, chunk.char_end
    grown = True
    while grown:  # grow the contiguous cover to both sides, within [lo, hi)
        grown = False
        for c in near:
            if c.char_start <= end < c.char_end and end < hi:
                end, grown = c.char_end, True
            if c.char_start < start <= c.char_end and start > lo:
                start, grown = c.char_start, True
    parts, covered = [], start
    for c in near:
        if c.char_start <= covered < c.char_end:
            parts.append(c.text[covered - c.char_start :])
            covered = c.char_end
    text = "".join(parts)[: end - start]
    a, b = max(lo, start), min(hi, end)
    return text[a - start : b - start], a


def _source(chunk, chunks, start, end, document_text) -> str:
    """Exact source text of the absolute span ``[start, end)``."""
    if document_text is not None:
        return document_text[start:end]
    text, base = _window(chunk, chunks, start, end, None)
    return text[start - base : end - base]


def _find_all(hay: str, needle: str) -> list[int]:
    out, i = [], hay.find(needle)
    while i >= 0:
        out.append(i)
        i = hay.find(needle, i + 1)
    return out


def _splits(text: str, i: int) -> bool:
    """Whether position ``i`` of ``text`` lies inside a word or a value ("$247|.83", "cust_47|11"), or
    between a number and its currency or percent sign ("$|247.83", "5|%"): a quote cut there drops the
    sign."""
    if i <= 0 or i >= len(text):
        return False
    a, b = text[i - 1], text[i]
    if (a.isalnum() or a == "_") and (b.isalnum() or b == "_"):
        if a.isnumeric() and b.isnumeric():  # "５|００", "三|十": a number is never cut
            return True
        return not (_ideographic(a) and _ideographic(b))  # Chinese, Japanese: no spaces between words
    j = i - 1
    while j > 0 and text[j].isspace() and i - j < 8:
        j -= 1
    if text[j].isdigit() and _SCALE_AFTER.match(text, i):
        return True  # "$5| million", "$5|\nmillion": the scale word belongs to the number
    if a in ".," and b.isdigit() and i >= 2 and text[i - 2].isdigit():
        return True
    if _DIGIT_AFTER.match(text, i) and _SIGN_BEFORE.search(text, max(0, i - 5), i):
        return True  # "$|247.83", "USD| 1,000": the currency belongs to the number
    if text[j].isdigit() and _PERCENT_AFTER.match(text, i):
        return True  # "5|%", "5| percent"
    return b in ".," and a.isdigit() and i + 1 < len(text) and text[i + 1].isdigit()


_SCALE_AFTER = re.compile(r"\s*(?i:million|billion|thousand|trillion)\b")
_IDEOGRAPHIC = ("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH", "HIRAGANA", "KATAKANA")


def _ideographic(ch: str) -> bool:
    """Han, hiragana or katakana: scripts written without spaces between words (Korean has them)."""
    return ord(ch) > 0x2E7F and unicodedata.name(ch, "").startswith(_IDEOGRAPHIC)


@dataclass(frozen=True)
class _Match:
    start: int  # absolute
    end: int
    whole: bool  # neither end cuts a word or a number


def _search(nq: str, text: str, base: int, chunk: ChunkSpec, fold: bool) -> list[_Match]:
    """Every normalised match of ``nq`` overlapping ``chunk``, with absolute offsets."""
    needle = normalise(nq, fold_case=True)[0] if fold else nq
    nt, src = normalise(text, fold_case=fold)
    found = []
    for a in _find_all(nt, needle):
        s, e = base + src[a], base + src[a + len(needle) - 1] + 1
        while e - base < len(text) and unicodedata.combining(text[e - base]):
            e += 1  # keep the accents of a decomposed last letter
        if s < chunk.char_end and e > chunk.char_start:
            found.append(_Match(s, e, not (_splits(text, s - base) or _splits(text, e - base))))
    return found


def _slack(nq: str) -> int:
    return 2 * len(nq) + 200


def _blank(text: str, base: int, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` (starting at absolute ``base``) with the absolute ``spans`` turned to spaces."""
    if not spans:
        return text
    chars = list(text)
    for a, b in spans:
        for i in range(max(a - base, 0), min(b - base, len(chars))):
            chars[i] = " "
    return "".join(chars)


def _matches(nq, chunk, chunks, document_text, fold, skip=()) -> list[_Match]:
    """All matches anchored in ``chunk``, searching the chunk and its overlapping neighbours, the
    ``skip`` spans read as blank."""
    text, base = _window(
        chunk, chunks, chunk.char_start - _slack(nq), chunk.char_end + _slack(nq), document_text
    )
    return _search(nq, _blank(text, base, skip), base, chunk, fold)


def _locate(nq, chunk, chunks, document_text, skip=()) -> tuple[list[_Match], str]:
    """The matches anchored in ``chunk`` and how they matched ("normalised" or "casefold"): whole ones
    (cutting no word or number) when there are any, else those that cut one; ``[]`` when none.

    Tries the chunk alone, then the chunk stitched with its neighbours (a quote crossing a chunk
    boundary), first case-sensitively, then case-folded.
    """
    cut: tuple[list[_Match], str] = ([], "")
    for fold in (False, True):
        how = "casefold" if fold else "normalised"
        inside = _search(nq, _blank(chunk.text, chunk.char_start, skip), chunk.char_start, chunk, fold)
        matches = inside + [
            m for m in _matches(nq, chunk, chunks, document_text, fold, skip) if m not in inside
        ]
        whole = [m for m in matches if m.whole]
        if whole:
            return whole, how
        if matches and not cut[0]:
            cut = (matches, how)
    return cut


def closest_passage(nq: str, text: str) -> str:
    """The passage of ``text`` (normalised) most similar to the normalised quote ``nq``."""
    nt = norm(text)
    if not nt or not nq:
        return ""
    sm = difflib.SequenceMatcher(None, nt, nq, autojunk=False)
    blocks = sorted(sm.get_matching_blocks(), key=lambda b: -b.size)[:4]
    best, best_ratio = "", -1.0
    for b in blocks:
        if b.size == 0:
            continue
        s = max(0, b.a - b.b)
        e = min(len(nt), s + len(nq))
        s = nt.rfind(" ", 0, s) + 1 if s > 0 else 0  # widen to word boundaries
        e_sp = nt.find(" ", e)
        e = len(nt) if e_sp < 0 else e_sp
        cand = nt[s:e]
        r = difflib.SequenceMatcher(None, cand, nq, autojunk=False).ratio()
        if r > best_ratio:
            best, best_ratio = cand, r
    return best


def _not_found_message(quote: str, nq: str, chunk: ChunkSpec) -> str:
    near = closest_passage(nq, chunk.text)
    msg = f'quote "{_short(quote)}" not found in chunk {chunk.chunk_id}'
    if near:
        msg += f'; closest passage: "{_short(near)}"'
    return msg


def _short(s: str, n: int = _SHOW) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 1] + "…"
