"""Cut a document's text into blocks: headings, paragraphs, tables and page furniture.

The text comes from :mod:`ingest.convert`: Markdown-ish for Office/HTML files (a paragraph
per line, blank lines between), or a PDF text layer with one line per printed line, a blank
line where the layout shows a gap, and ``"\\f"`` between pages. So a paragraph is a run of
lines, and a new one starts

* after a blank line, unless the previous line ended mid-sentence and the next one starts
  in lower case (a sentence running over a page break or round a page number);
* at a heading (:mod:`ingest.headings`), a Markdown table row, or an enumerated clause
  (``(a)``, ``2.1``, ``iv.``, a bullet) following a finished sentence;
* after a short line that ends a sentence ("ragged right" paragraph end in print).

A page break alone never ends a paragraph, so a clause running across pages stays whole.
Page furniture (a line that is only a page number, or a running header/footer repeated at
the page edges) inside a running sentence stays in that paragraph; between paragraphs it
becomes a ``furniture`` block the chunker glues to what follows. Offsets are into the
original text; nothing is rewritten.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ingest.headings import (
    Heading,
    caps_title_words,
    inline_heading,
    line_heading,
    starts_with_keyword,
    title_line,
)

_LINE = re.compile(r"\S(?:[^\n\f]*\S)?")
_TERMINAL = re.compile(r"[.!?:;][\"'”’)\]]*$")
_SENTENCE_END = re.compile(r"[.!?:][\"'”’)\]]*$")
_LIST_LEAD_OUT = re.compile(r"(?:;|,)\s*(?:and|or)?$|\b(?:and|or)$")
_ENUMERATED = re.compile(
    r"(?:\((?:[a-zA-Z]{1,4}|\d{1,3})\)|\d{1,3}(?:\.\d{1,3})*[.)]?(?=\s)|\d{1,3}(?:\.\d{1,3})+"
    r"|[A-Z][.)](?=\s)|[ivxlcIVXLC]{1,6}[.)](?=\s)|[•●·▪◦\-–*](?=\s))"
)
_FURNITURE = re.compile(
    r"(?:[-–—]\s*\d{1,4}\s*[-–—]|\d{1,4}|\[\s*\d{1,4}\s*\]|(?:Page|PAGE)\s+\d{1,4}(?:\s+(?:of|OF)\s+\d{1,4})?"
    r"|[ivxlc]{1,6})"
)
_DANGLING = re.compile(
    r"(?:^|\s)(?:a|an|the|of|to|from|by|for|with|in|on|at|and|or|nor|that|which|any|such|its|their|"
    r"under|upon|between|than|as|shall|will|may|must|be|is|are)$"
)
# A line that is only a clause number ("A.", "(iv)", "Section 5."): it belongs to the next line.
_ENUMERATOR_ONLY = re.compile(
    r"\(?(?:\d{1,3}(?:\.\d{1,3})*|[A-Za-z]|[ivxlcIVXLC]{1,6})[.)]?|(?:Section|SECTION)\s+\d{1,3}(?:\.\d{1,3})*\.?"
)
# Headings recognised even right after an unfinished line (a running footer, a title line).
_STRONG_HEADING = re.compile(
    r"#{1,6}\s|ARTICLE\s|Article\s+[IVXLC\d]|SECTION\s|EXHIBIT\s|SCHEDULE\s|ANNEX\s|APPENDIX\s"
)
_ENUMERATION_FIRST = frozenset("(0123456789•●·▪◦-–*ivxlcIVXLC")
_BLOCK_KIND = {"text": "paragraph", "table": "table"}
_DIGITS = re.compile(r"\d+")
_HEADING_START = re.compile(r"[#A-Z0-9§*_]")


@dataclass(frozen=True)
class Block:
    kind: str  # "heading" | "paragraph" | "table" | "furniture"
    start: int
    end: int
    heading: Heading | None = None  # for headings, and paragraphs that open with an inline heading


@dataclass(slots=True)
class _Line:
    start: int
    end: int
    text: str
    blank_before: bool
    kind: str  # "text" | "table" | "furniture"


def split_blocks(text: str) -> list[Block]:
    """Blocks of ``text`` in reading order, with ``[start, end)`` offsets into it."""
    lines = _lines(text)
    if not lines:
        return []
    typical = _typical_line_length(lines)
    blocks: list[Block] = []
    cur_start = cur_end = -1  # the open paragraph, if any
    cur_kind = ""
    last_text: _Line | None = None  # the last non-furniture line of the open block
    pending: list[_Line] = []  # furniture waiting to see whether the sentence goes on
    i = 0
    n = len(lines)

    def close() -> None:
        nonlocal cur_start, cur_kind
        if cur_start >= 0:
            heading = None
            if cur_kind == "paragraph" and (
                text[cur_start].isdigit() or text.startswith(("Section", "SECTION"), cur_start)
            ):
                heading = inline_heading(text[cur_start : min(cur_end, cur_start + 200)])
            blocks.append(Block(cur_kind, cur_start, cur_end, heading))
        cur_start = -1
        cur_kind = ""

    def flush_furniture() -> None:
        for f in pending:
            blocks.append(Block("furniture", f.start, f.end))
        pending.clear()

    while i < n:
        line = lines[i]
        if line.kind == "furniture":
            if cur_start >= 0 and cur_kind == "paragraph":
                pending.append(line)
            else:
                close()
                blocks.append(Block("furniture", line.start, line.end))
            i += 1
            continue

        blank = line.blank_before or any(f.blank_before for f in pending) or bool(pending)
        continues = (
            blank
            and cur_kind == "paragraph"
            and line.kind == "text"
            and last_text is not None
            and _runs_on(last_text.text, line.text)
        )
        if continues:
            cur_end = line.end  # the sentence runs on (over a gap, page number or page break)
            pending.clear()
            last_text = line
            i += 1
            continue

        starts_fresh = cur_start < 0 or blank or (last_text is not None and _TERMINAL.search(last_text.text))
        heading = None
        if (
            line.kind == "text"
            and _HEADING_START.match(line.text)
            and (starts_fresh or _strong_heading(last_text, line.text))
        ):
            heading = line_heading(line.text)
            if heading is not None and i + 1 < n and _lowercase_continuation(lines[i + 1]):
                heading = None  # "12. Confidential Information\nshall mean ...": a sentence
        if heading is not None and caps_title_words(line.text):
            # an all-caps title may wrap; a block of capitals (a notice) is text: None
            heading, last_line = _caps_heading(lines, i)
            if heading is not None and last_line > i:
                close()
                flush_furniture()
                blocks.append(Block("heading", line.start, lines[last_line].end, heading))
                last_text = None
                i = last_line + 1
                continue
        if heading is not None:
            close()
            flush_furniture()
            end = line.end
            if heading.bare and i + 1 < n and lines[i + 1].kind == "text":
                nxt = lines[i + 1].text
                title = title_line(nxt)
                if title is not None and not _ENUMERATED.match(nxt) and not starts_with_keyword(nxt):
                    heading = Heading(heading.level, f"{heading.label} {title}"[:120])
                    end = lines[i + 1].end
                    i += 1
            blocks.append(Block("heading", line.start, end, heading))
            last_text = None
            i += 1
            continue

        glued = (
            last_text is not None
            and len(last_text.text) <= 14
            and line.kind == "text"
            and _ENUMERATOR_ONLY.fullmatch(last_text.text)
        )
        same_block = (
            not blank and _BLOCK_KIND[line.kind] == cur_kind and not _new_paragraph(last_text, line, typical)
        )
        if cur_start >= 0 and (glued or same_block):
            cur_end = line.end
            last_text = line
            i += 1
            continue

        close()
        flush_furniture()
        cur_start, cur_end, cur_kind = line.start, line.end, _BLOCK_KIND[line.kind]
        last_text = line
        i += 1

    close()
    flush_furniture()
    return blocks


def furniture_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every page-furniture line: page numbers, running headers/footers."""
    return [(line.start, line.end) for line in _lines(text) if line.kind == "furniture"]


def _lines(text: str) -> list[_Line]:
    lines: list[_Line] = []
    page_starts = [0]  # index of the first line of each page
    prev_end = 0
    for m in _LINE.finditer(text):
        start, end = m.span()
        line_text = m.group()
        if lines and text.find("\f", prev_end, start) >= 0:
            page_starts.append(len(lines))
        gap_newlines = text.count("\n", prev_end, start)
        blank_before = gap_newlines >= 2 and bool(lines)
        if line_text.startswith("|"):
            kind = "table"
        elif len(line_text) <= 16 and _FURNITURE.fullmatch(line_text):
            kind = "furniture"
        else:
            kind = "text"
        lines.append(_Line(start, end, line_text, blank_before, kind))
        prev_end = end
    _mark_running_lines(lines, page_starts)
    return lines


def _mark_running_lines(lines: list[_Line], page_starts: list[int]) -> None:
    """Mark running headers and footers as furniture.

    A line among the first or last two of a page whose text, numbers ignored, recurs at the
    edge of at least 3 pages and 40% of all pages ("Page 7 of 85", "Confidential", a
    filing stamp) is page furniture wherever it stands at a page edge.
    """
    pages = len(page_starts)
    if pages < 3:
        return
    bounds = page_starts + [len(lines)]
    keys: dict[int, str] = {}  # line index -> running key, for lines at page edges
    counts: dict[str, int] = {}
    for a, b in zip(bounds, bounds[1:]):
        page_keys = set()
        for k in {a, a + 1, b - 2, b - 1}:
            if a <= k < b and lines[k].kind == "text" and len(lines[k].text) <= 150:
                keys[k] = _running_key(lines[k].text)
                page_keys.add(keys[k])
        for key in page_keys:
            counts[key] = counts.get(key, 0) + 1
    threshold = max(3, 0.4 * pages)
    for k, key in keys.items():
        if counts[key] >= threshold:
            lines[k].kind = "furniture"


def _running_key(line: str) -> str:
    """What repeats in a running line: its text with numbers blanked ("Page # of #").

    A heading keeps its numbers, so sections that each open a page ("Section 1",
    "Section 2", ...) are not mistaken for a running header.
    """
    if line_heading(line) is not None:
        return line
    return _DIGITS.sub("#", line.lower())


def _caps_heading(lines: list[_Line], i: int) -> tuple[Heading | None, int]:
    """An all-caps heading starting at line ``i``, possibly wrapped over up to 3 lines.

    Following all-caps lines with no gap before them belong to the same title; if the
    gathered title is too long (more than 12 words) or ends on a connecting word it is a
    block of capitals (a notice or disclaimer), not a heading: ``(None, i)``.
    """
    last = i
    words = caps_title_words(lines[i].text)
    while last + 1 < len(lines) and last - i < 2:
        nxt = lines[last + 1]
        more = caps_title_words(nxt.text) if nxt.kind == "text" and not nxt.blank_before else 0
        if not more:
            break
        words += more
        last += 1
    if last == i:
        return line_heading(lines[i].text), i
    title = " ".join(line.text for line in lines[i : last + 1])
    heading = line_heading(title) if words <= 12 else None
    if heading is None:
        return None, i
    return heading, last


def _typical_line_length(lines: list[_Line]) -> int:
    """The length of a full printed line (90th percentile of text lines)."""
    lengths = sorted(len(line.text) for line in lines if line.kind == "text")
    if not lengths:
        return 80
    return lengths[min(len(lengths) - 1, int(0.9 * len(lengths)))]


def _runs_on(prev: str, nxt: str) -> bool:
    """Whether the sentence of line ``prev`` goes on in line ``nxt`` despite a gap between.

    True when ``prev`` stops without terminal punctuation and either ``nxt`` starts in lower
    case, or ``prev`` ends in a lower-case word, a comma or a hyphen and ``nxt`` does not
    open a clause or a heading.
    """
    if _TERMINAL.search(prev):
        return False
    first = nxt[0]
    if first.islower():
        return True
    if _DANGLING.search(prev):
        return True  # "... authority from" + "MICOA."
    if prev.isupper() and (len(prev.split()) >= 6 or _DANGLING.search(prev.lower())):
        # a line of an all-caps clause ("IN NO EVENT SHALL ... FOR ANY") runs on
        return not _ENUMERATED.match(nxt) and line_heading(nxt) is None
    last = prev[-1]
    if last.islower() or last.isdigit() or last in ",-–(":
        return not _ENUMERATED.match(nxt) and line_heading(nxt) is None
    return False


def _strong_heading(prev: _Line | None, line: str) -> bool:
    """Whether ``line`` opens a heading even though the line before it did not end a sentence
    (a running footer or a title line before "ARTICLE 5"). Not when that line breaks off on a
    comma or a connecting word ("... SET FORTH IN" + "ARTICLE 6 OR SECTION 14.2."): there the
    sentence goes on with a cross-reference. A Markdown heading always opens one."""
    if not _STRONG_HEADING.match(line):
        return False
    if prev is None or line.startswith("#"):
        return True
    text = prev.text
    last = text.rsplit(None, 1)[-1]
    if last.isupper() and len(last) > 1:
        text = text.lower()  # an all-caps clause ("SET FORTH IN"), not "EXHIBIT A"
    return not (text.endswith(",") or _DANGLING.search(text))


def _lowercase_continuation(nxt: _Line) -> bool:
    return nxt.kind == "text" and not nxt.blank_before and nxt.text[0].islower()


def _new_paragraph(prev: _Line | None, line: _Line, typical: int) -> bool:
    """Whether ``line`` (no blank line before it) opens a new paragraph after ``prev``."""
    if prev is None or line.kind == "table":
        return False
    prev_text = prev.text
    first = line.text[0]
    enumerated = first in _ENUMERATION_FIRST or (first.isalpha() and line.text[1:2] in (".", ")"))
    if enumerated and _ENUMERATED.match(line.text):
        return bool(_TERMINAL.search(prev_text) or _LIST_LEAD_OUT.search(prev_text))
    if len(prev_text) < 0.7 * typical and _SENTENCE_END.search(prev_text):
        return first.isupper() or first.isdigit() or first in '"“(['
    return False
