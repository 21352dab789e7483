"""The page table of a document: which characters of the document text lie on which page.

A converted document is one string whose pages are joined by a form feed (``"\\f"``).
Page *i* covers ``text[span.char_start:span.char_end]``; its ``char_end`` is the index of
the ``"\\f"`` that closes it (or ``len(text)`` for the last page), and the next page starts
one character later. So the page break character itself belongs to no page's text, and
:func:`page_of` assigns it to the page it closes.

Pure functions over plain data: no Django here.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import NamedTuple

PAGE_BREAK = "\f"


class PageSpan(NamedTuple):
    """One page: its 1-based physical number and its ``[char_start, char_end)`` in the text (a
    tuple, so a row read with ``values_list("number", "char_start", "char_end")`` is one too)."""

    number: int
    char_start: int
    char_end: int


# The page table of a document: its pages in order of ``char_start``.
PageTable = Sequence[PageSpan]


def page_of(offset: int, pages: Sequence[PageSpan]) -> int:
    """Return the page number holding character ``offset`` (bisect over ``char_start``).

    An offset on a page-break character belongs to the page before it; offsets before the
    first page clamp to the first page and offsets past the end to the last page. Returns 1
    for an empty page table so callers never need a special case.
    """
    if not pages:
        return 1
    return PageIndex(pages).page_of(offset)


def pages_of_span(start: int, end: int, pages: PageTable) -> tuple[int, int]:
    """(first, last) page of the half-open span ``[start, end)``."""
    index = PageIndex(pages)
    return index.page_of(start), index.page_of(max(start, end - 1))


class PageIndex:
    """Map many offsets to pages (the page starts are sorted once, then bisected). Pages may be
    ``PageSpan`` rows or plain ``(number, char_start, char_end)`` tuples."""

    def __init__(self, pages: PageTable):
        self._pages = sorted(pages, key=lambda p: p[1])
        self._starts = [p[1] for p in self._pages]

    def page_of(self, offset: int) -> int:
        if not self._pages:
            return 1
        index = bisect.bisect_right(self._starts, offset) - 1
        return self._pages[max(index, 0)][0]


def spans_from_text(text: str, first_number: int = 1) -> list[PageSpan]:
    """Build the page table of a text whose pages are separated by ``"\\f"``."""
    spans: list[PageSpan] = []
    start = 0
    number = first_number
    while True:
        end = text.find(PAGE_BREAK, start)
        if end < 0:
            spans.append(PageSpan(number, start, len(text)))
            return spans
        spans.append(PageSpan(number, start, end))
        start = end + 1
        number += 1


def join_pages(page_texts: Sequence[str]) -> tuple[str, list[PageSpan]]:
    """Join page texts with ``"\\f"`` and return ``(text, page table)``.

    A stray form feed inside a page's own text would shift every later page number, so it
    is turned into a newline first.
    """
    cleaned = [p.replace(PAGE_BREAK, "\n") for p in page_texts] or [""]
    text = PAGE_BREAK.join(cleaned)
    return text, spans_from_text(text)


_PARAGRAPH_GAP = re.compile(r"\n[ \t]*\n\s*")


def estimate_pages(text: str, *, page_chars: int = 3000) -> list[str]:
    """Split a page-less text (DOCX, HTML, EPUB, Markdown) into pages of about ``page_chars``.

    Breaks go at paragraph boundaries (a blank line) at or after ``page_chars`` characters
    into the page, so no paragraph is cut; if a single paragraph runs past twice the target
    the page breaks at the next line end, and past three times at the next space. The pages
    are returned as a list; ``"".join(pages) == text`` (nothing is added or lost), so the
    caller decides how to join them (normally :func:`join_pages`).
    """
    if len(text) <= page_chars:
        return [text]
    pages: list[str] = []
    start = 0
    n = len(text)
    while n - start > page_chars:
        cut = _next_break(text, start + page_chars, start + 2 * page_chars, _PARAGRAPH_GAP)
        if cut is None:
            cut = _next_break(text, start + 2 * page_chars, start + 3 * page_chars, re.compile(r"\n"))
        if cut is None:
            cut = _next_break(text, start + 3 * page_chars, n, re.compile(r" "))
        if cut is None or cut >= n:
            break
        pages.append(text[start:cut])
        start = cut
    pages.append(text[start:])
    return pages


def _next_break(text: str, lo: int, hi: int, pattern: re.Pattern) -> int | None:
    """The end of the first match of ``pattern`` starting in ``[lo, hi)``, or None."""
    m = pattern.search(text, lo, min(hi + 8, len(text)))
    if m is None or m.start() >= hi:
        return None
    return m.end()
