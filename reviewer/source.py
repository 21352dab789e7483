"""The source viewer's core: a page's text with cited spans highlighted, always escaped.

Pure functions over plain data (no database): contracts may contain HTML, so every slice of
document text goes through ``escape`` and only our own ``<mark>`` tags are trusted.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

CONTEXT_CHARS = 320  # neighbouring context shown from the previous / next page
_MD_HEADING = re.compile(r"^(#{1,6}[ \t]+)\S.*$", re.M)


@dataclass(frozen=True)
class PageText:
    number: int
    start: int  # absolute offsets into Document.text
    end: int
    text: str  # == document.text[start:end]


@dataclass(frozen=True)
class Span:
    citation_id: int
    start: int  # absolute offsets into Document.text
    end: int


def highlight(page: PageText, spans: list[Span] | tuple[Span, ...] = ()) -> SafeString:
    """The page text as HTML, each span (clipped to the page) wrapped in ``<mark data-citation-id>``;
    Markdown heading lines (what DOCX, HTML and Markdown convert to) in ``<strong class="md-h">``."""
    headings = _heading_lines(page.text)
    parts: list[str] = []
    pos = page.start
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        a, b = max(span.start, page.start, pos), min(span.end, page.end)
        if a >= b:
            continue
        parts.append(_text(page, pos, a, headings))
        parts.append(_mark(span, page, _text(page, a, b, headings)))
        pos = b
    parts.append(_text(page, pos, page.end, headings))
    return mark_safe("".join(parts))


def _mark(span: Span, page: PageText, inner: SafeString) -> SafeString:
    """A span's ``<mark>`` on ``page``. A quote across a page break is marked on each page, and the pages
    are shown together: only the half where it starts carries its id (ids are unique in a page)."""
    if span.start < page.start:
        return format_html('<mark data-citation-id="{}">{}</mark>', span.citation_id, inner)
    return format_html('<mark data-citation-id="{}" id="cite-{}" tabindex="-1">{}</mark>',
                       span.citation_id, span.citation_id, inner)


def _heading_lines(text: str) -> list[tuple[int, int, int]]:
    """(line start, end of its "# " marker, line end) of each Markdown heading line, page-relative."""
    return [(m.start(), m.start() + len(m.group(1)), m.end()) for m in _MD_HEADING.finditer(text)]


def _text(page: PageText, a: int, b: int, headings: list[tuple[int, int, int]]) -> SafeString:
    """Escaped ``page`` text between absolute offsets ``a`` and ``b``, the parts of heading lines in it
    wrapped (each piece is wrapped on its own, so tags nest whatever the marks cut)."""
    lo, hi = a - page.start, b - page.start
    out, pos = [], lo
    for start, marker_end, end in headings:
        s, e = max(start, lo), min(end, hi)
        if s >= e:
            continue
        out.append(escape(page.text[pos:s]))
        marker = page.text[s:min(marker_end, e)] if s < marker_end else ""
        out.append(format_html('<strong class="md-h">{}{}</strong>',
                               format_html('<span class="md-mark">{}</span>', marker) if marker else "",
                               page.text[s + len(marker):e]))
        pos = e
    out.append(escape(page.text[pos:hi]))
    return mark_safe("".join(out))


def tail(text: str, chars: int = CONTEXT_CHARS) -> str:
    """The end of ``text`` (about ``chars`` long), starting at a word boundary."""
    if len(text) <= chars:
        return text
    cut = text[-chars:]
    space = cut.find(" ")
    return "… " + (cut[space + 1 :] if 0 <= space < 40 else cut)


def head(text: str, chars: int = CONTEXT_CHARS) -> str:
    """The start of ``text`` (about ``chars`` long), ending at a word boundary."""
    if len(text) <= chars:
        return text
    cut = text[:chars]
    space = cut.rfind(" ")
    return (cut[:space] if space > chars - 40 else cut) + " …"


def pages_of_span(start: int, end: int, pages: list[PageText]) -> list[int]:
    """Numbers of the pages a span [start, end) touches (pages sorted by number)."""
    return [p.number for p in pages if p.start < max(end, start + 1) and start < p.end]
