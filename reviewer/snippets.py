"""A search hit's snippet: a window of a chunk's text around the query's words, escaped, the words marked.
Pure (plain strings in, HTML out).

A word of the text is marked when it begins with a query word's stem (its first letters, at most
``STEM_LETTERS`` of them: "terminate" marks "termination" and "terminated"), so the marks follow the
full-text side's English stems closely enough for a reader's eye without asking the database. An exact
value of the query ("$18.50", "cust_4711", "March 3, 2025": ``extraction.verify.values_asked``) is marked
where it stands, as the citation verifier bounds it ("18.50" is not "$18.50") and forgives its layout
("thirty (30) days" for "30 days"). The text is read
as its page reads (``reviewer.source.readable``): a sheet's row without its pipes.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

from extraction.verify import exact_values, value_spans, values_asked
from reviewer.source import readable

STEM_LETTERS = 6
MIN_WORD = 3  # shorter query words ("of", "to") are not marked
WINDOW = 280  # characters of the text a snippet shows
_WORD = re.compile(r"\w+")


def stems(query: str) -> list[str]:
    """The query's word stems that the snippet marks, longest first. A value and a word with a digit are
    marked only as written: "cust_4711" does not mark "cust_47112", nor "INV-2024-0042" "invoice"."""
    for value in exact_values(query):
        query = query.replace(value, " ")
    words = {
        w.casefold()[:STEM_LETTERS]
        for w in _WORD.findall(query)
        if len(w) >= MIN_WORD and not any(ch.isdigit() for ch in w)
    }
    return sorted(words, key=lambda w: (-len(w), w))


def snippet(text: str, query: str, window: int = WINDOW) -> str:
    """Escaped HTML: about ``window`` characters of ``text`` around its marked words, with "…" where it is
    cut, each word that begins with a stem of ``query`` in ``<mark>``. The window is the one that shows the
    most of the query's words (then the most marks, then the earliest): "increase the rent" answers "rent
    increase" better than the first "rent" of the chunk."""
    text = " ".join(readable(text).split())
    found = _marked_words(text, query)
    spans = [span for span, _ in found]
    first = _best_anchor(found, window) if found else 0
    start = max(0, min(first - window // 3, len(text) - window))
    end = min(len(text), start + window)
    if start > 0:  # a whole word first
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < first else start
    out, at = [], start
    for s, e in spans:
        if s < start or e > end:
            continue
        out.append(html.escape(text[at:s]))
        out.append(f"<mark>{html.escape(text[s:e])}</mark>")
        at = e
    out.append(html.escape(text[at:end]))
    return ("…" if start > 0 else "") + "".join(out) + ("…" if end < len(text) else "")


def anchor(text: str, query: str, window: int = WINDOW) -> int | None:
    """Where in ``text`` the marked word stands that opens the window a snippet of it shows (its page and
    section are the passage's, whatever the chunk's first ones); None when no word is marked."""
    found = _marked_words(text, query)
    return _best_anchor(found, window) if found else None


@lru_cache(maxsize=256)
def _query_marks(query: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The query's stems and exact values, read once a query: a search marks its 40 passages with one."""
    return tuple(stems(query)), tuple(values_asked(query))


def _marked_words(text: str, query: str) -> list[tuple[tuple[int, int], str]]:
    """((start, end), stem or value) of each word of ``text`` that begins with a stem of ``query`` (the
    regular expression finds the candidates; the case-folded word decides) and of each of the query's
    exact values, in order, none overlapping (the longer of two that start together)."""
    marks, values = _query_marks(query)
    found = [((s, e), value) for s, e, value in value_spans(text, values)]
    if marks:
        starting = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, marks)) + r")\w*", re.IGNORECASE)
        for m in starting.finditer(text):
            word = m.group().casefold()
            stem = next((s for s in marks if word.startswith(s)), None)
            if stem is not None:
                found.append((m.span(), stem))
    kept: list[tuple[tuple[int, int], str]] = []
    for span, key in sorted(found, key=lambda f: (f[0][0], -f[0][1])):
        if not kept or span[0] >= kept[-1][0][1]:
            kept.append((span, key))
    return kept


def _best_anchor(found: list[tuple[tuple[int, int], str]], window: int) -> int:
    """Where the marked word starts that opens the window (a third of it before the word) holding the most
    distinct stems, then the most marks; the earliest of equals."""
    best, best_key = found[0][0][0], (-1, -1)
    for (anchor, _), _ in found:
        lo, hi = anchor - window // 3, anchor - window // 3 + window
        inside = [stem for (s, e), stem in found if lo <= s and e <= hi]
        key = (len(set(inside)), len(inside))
        if key > best_key:
            best, best_key = anchor, key
    return best
