"""The source viewer's core: a page's text with cited spans highlighted, always escaped.

Pure functions over plain data (no database): contracts may contain HTML, so every slice of
document text goes through ``escape`` (Django's, or the standard library's ``html.escape`` it wraps, in
table cells) and only our own tags (``<mark>``, a heading's ``<strong>``, a table's cells) are trusted.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

PASSAGES = ("closest", "correction")  # the kinds of passage marked that are not citations (``Span.passage``)
CONTEXT_CHARS = 320  # neighbouring context shown from the previous / next page
_MD_HEADING = re.compile(r"^(#{1,6}[ \t]+)\S.*$", re.M)
_TABLE_ROW = re.compile(r"^[ \t]*\|[^\n]*\|[ \t]*$", re.M)  # a line of a Markdown table
_TABLE_RULE = re.compile(r"[ \t]*\|(?:[ \t]*:?-{3,}:?[ \t]*\|)+[ \t]*$")  # | --- | :---: |
_CELL_BAR = re.compile(r"(?<!\\)\|")  # a "|" between cells (a "\|" is one inside a cell's text)


def readable(text: str) -> str:
    """``text`` as its page reads, without the Markdown office and web documents are converted to: no
    heading "#", no table rule ("| --- |"), a row's cells apart by " · " (a search snippet's text)."""
    lines = []
    for line in text.split("\n"):
        if _TABLE_RULE.fullmatch(line):
            continue
        if _TABLE_ROW.fullmatch(line):
            line = " · ".join(cell.strip() for cell in _CELL_BAR.split(line.strip())[1:-1])
        elif heading := _MD_HEADING.fullmatch(line):
            line = line[len(heading.group(1)) :]
        lines.append(line)
    return "\n".join(lines)


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
    passage: str = ""  # a passage shown that is not a citation: "closest" (a not_found's nearest miss,
    # ``Extraction.closest``) or "correction" (where a reviewer's corrected text stands)


def highlight(page: PageText, spans: list[Span] | tuple[Span, ...] = ()) -> SafeString:
    """The page text as HTML, each span (clipped to the page) wrapped in ``<mark data-citation-id>``;
    Markdown heading lines (what DOCX, HTML and Markdown convert to) in ``<strong class="md-h">``, and
    Markdown tables (what XLSX and the tables of DOCX, HTML and PPTX convert to) as tables: a fee schedule
    reads in rows and columns, not as lines of "|". A span across cells is marked in each."""
    headings = _heading_lines(page.text)
    spans = sorted(spans, key=lambda s: (s.start, s.end))
    emitted: set[int | str] = set()  # citations whose mark carrying the id is out (ids are unique in a page)
    parts: list[str] = []
    pos = page.start
    for table in _tables(page.text):
        start, end = page.start + table.start, page.start + table.end
        parts.append(_marked(page, pos, start, spans, headings, emitted))
        parts.append(_table(page, table, spans, emitted))
        pos = end
    parts.append(_marked(page, pos, page.end, spans, headings, emitted))
    return mark_safe("".join(parts))


def _marked(
    page: PageText, a: int, b: int, spans: list[Span], headings, emitted: set[int | str]
) -> SafeString:
    """Escaped text of ``page`` between absolute offsets ``a`` and ``b``, the spans in it marked."""
    parts: list[str] = []
    pos = a
    for span in spans:
        s, e = max(span.start, pos), min(span.end, b)
        if s >= e:
            continue
        parts.append(_text(page, pos, s, headings))
        parts.append(_mark(span, page, _text(page, s, e, headings), emitted))
        pos = e
    parts.append(_text(page, pos, b, headings))
    return mark_safe("".join(parts))


def _mark(span: Span, page: PageText, inner: SafeString, emitted: set[int | str]) -> SafeString:
    """A span's ``<mark>`` on ``page``. A quote across a page break (or across table cells) is marked in
    each part: only the first part where it starts on this page carries its id."""
    if span.passage in PASSAGES:
        kind = span.passage
        first = span.start >= page.start and kind not in emitted
        emitted.add(kind)
        if first:
            return format_html(
                '<mark class="{}" data-{} id="{}-passage" tabindex="-1">{}</mark>', kind, kind, kind, inner
            )
        return format_html('<mark class="{}" data-{}>{}</mark>', kind, kind, inner)
    if span.start < page.start or span.citation_id in emitted:
        return format_html('<mark data-citation-id="{}">{}</mark>', span.citation_id, inner)
    emitted.add(span.citation_id)
    return format_html(
        '<mark data-citation-id="{}" id="cite-{}" tabindex="-1">{}</mark>',
        span.citation_id,
        span.citation_id,
        inner,
    )


@dataclass(frozen=True)
class _Table:
    start: int  # page-relative: the first row's first character ...
    end: int  # ... to past the newline after the last row
    rows: tuple[tuple[int, int], ...]  # (start, end) of each row line
    header: bool  # its second line is the rule under a header row


def _tables(text: str) -> list[_Table]:
    """The Markdown tables of page-relative ``text``: two or more consecutive lines that start and end
    with "|" (a table continued from the page before has no header row)."""
    tables: list[list[tuple[int, int]]] = []
    run: list[tuple[int, int]] = []
    for m in _TABLE_ROW.finditer(text):
        if run and m.start() != run[-1][1] + 1:
            tables.append(run)
            run = []
        run.append((m.start(), m.end()))
    tables.append(run)
    out = []
    for rows in tables:
        if len(rows) < 2:
            continue
        end = rows[-1][1] + (1 if text[rows[-1][1] : rows[-1][1] + 1] == "\n" else 0)
        header = bool(_TABLE_RULE.match(text, rows[1][0], rows[1][1]))
        out.append(_Table(rows[0][0], end, tuple(rows), header))
    return out


def _table(page: PageText, table: _Table, spans: list[Span], emitted: set[int | str]) -> SafeString:
    """``table`` as an HTML table, each cell's text (spaces around it aside) escaped and marked; the rule
    under the header row is not shown, nor are the "|" between cells. Built as plain strings (a sheet of
    ten thousand rows is one page: Django's lazy-aware helpers took half a second over its cells)."""
    rows = []
    for index, (line_start, line_end) in enumerate(table.rows):
        if table.header and index == 1:
            continue
        opening, closing = ('<th scope="col">', "</th>") if table.header and index == 0 else ("<td>", "</td>")
        line = page.text[line_start:line_end]
        bars = [line_start + m.start() for m in _CELL_BAR.finditer(line)]
        cells = []
        for left, right in zip(bars, bars[1:]):
            a, b = left + 1, right
            while a < b and page.text[a] in " \t":
                a += 1
            while b > a and page.text[b - 1] in " \t":
                b -= 1
            start, end = page.start + a, page.start + b
            if any(span.start < end and start < span.end for span in spans):
                inner = str(_marked(page, start, end, spans, (), emitted))
            else:
                inner = html.escape(page.text[a:b])  # what django's escape returns, without its wrapper
            # a "|" inside a cell's text is stored escaped ("\|"): shown as the reader wrote it
            cells.append(opening + inner.replace("\\|", "|") + closing)
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return mark_safe('<div class="md-table"><table>' + "".join(rows) + "</table></div>")


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
        marker = page.text[s : min(marker_end, e)] if s < marker_end else ""
        out.append(
            format_html(
                '<strong class="md-h">{}{}</strong>',
                format_html('<span class="md-mark">{}</span>', marker) if marker else "",
                page.text[s + len(marker) : e],
            )
        )
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
