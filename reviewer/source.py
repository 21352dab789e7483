"""The source viewer's core: a page's text with cited spans highlighted, always escaped.

Pure functions over plain data (no database): contracts may contain HTML, so every slice of
document text goes through ``escape`` and only our own ``<mark>`` tags are trusted.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

CONTEXT_CHARS = 320  # neighbouring context shown from the previous / next page


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
    """The page text as HTML, each span (clipped to the page) wrapped in ``<mark data-citation-id>``."""
    parts: list[str] = []
    pos = page.start
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        a, b = max(span.start, page.start, pos), min(span.end, page.end)
        if a >= b:
            continue
        parts.append(escape(page.text[pos - page.start : a - page.start]))
        parts.append(
            format_html(
                '<mark data-citation-id="{}" id="cite-{}" tabindex="-1">{}</mark>',
                span.citation_id,
                span.citation_id,
                page.text[a - page.start : b - page.start],
            )
        )
        pos = b
    parts.append(escape(page.text[pos - page.start :]))
    return mark_safe("".join(parts))


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
