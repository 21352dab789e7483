"""Where a span of an office original's converted text lies on the PDF LibreOffice laid out of it.

Our text of a DOCX (PPTX, XLSX, EPUB, HTML) is Markdown made by our converter, and its pages are ours
(estimated from length, or a slide or sheet each); LibreOffice's PDF has its own text layer and its own
page breaks. Neither text's offsets lead to the other, so a quote is found by its words: both texts are
*folded* (NFKC, case folded, letters and digits only: Markdown marks, table pipes, spaces and line
breaks fall away, as do LibreOffice's hyphens and line ends) and the quote's folded text is searched in
the PDF's. A quote found more than once is the occurrence nearest where it is expected: its folded
offset in our text, scaled by the ratio of the two folded lengths (a header or page number repeated on
every LibreOffice page stretches that text evenly). A quote whose words differ in the middle (a field,
a footnote mark) is found by its head and tail when they stand the quote's length apart. A short quote
found far from where it is expected, or not at all, is not located: the page is shown without a box
rather than with a wrong one.

The glyphs of the found characters are boxed as ``ingest.pdf_boxes`` boxes a PDF's: pdfium's loose
character boxes merged along each line. A page of ours is shown as the LibreOffice page its part of the
quote starts on; without a quote, as the page its own text starts on. pdfium calls are not thread-safe:
callers hold ``ingest.pdf_pages.PDFIUM_LOCK``.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ingest.pdf_boxes import Box, _utf16_offsets, add_to_lines, glyph_box, page_frame

ANCHOR = 40  # folded characters of a quote's head and tail, when the whole quote is not found as it is
SHORT = 12  # a folded quote shorter than this is taken only near where it is expected
NEAR = 3000  # folded characters either side of the expected place a short quote must lie within
PAGE_PROBE = 64  # folded characters of a page's start that find its LibreOffice page
PAGE_WINDOW = 4  # a LibreOffice page's start is looked for within this many of its lengths after the last


@dataclass(frozen=True)
class Folded:
    """A text folded for matching, and the index in the original text of each folded character."""

    text: str
    origin: list[int]

    def at(self, offset: int) -> int:
        """The folded index of the first folded character at or after ``offset`` of the original text."""
        return bisect_left(self.origin, offset)


def fold(text: str) -> Folded:
    out: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        if ch.isascii():
            if ch.isalnum():
                out.append(ch.lower())
                origin.append(i)
            continue
        for c in unicodedata.normalize("NFKC", ch).casefold():
            if c.isalnum():
                out.append(c)
                origin.append(i)
    return Folded("".join(out), origin)


@dataclass(frozen=True)
class Layer:
    """The text layer of a PDF, folded: the pages' folded texts joined, where each page starts in it,
    and each folded character's index in its page's raw text (``PdfTextPage.get_text_range``)."""

    text: str
    starts: list[int]  # folded index where each page (0-based) starts
    raw: list[int]  # index into the page's raw text, per folded character
    raws: list[str]  # each page's raw text

    @property
    def page_count(self) -> int:
        return len(self.starts)

    def page_at(self, index: int) -> int:
        """The 0-based page of folded character ``index`` (clamped into the layer)."""
        return max(0, bisect_right(self.starts, max(0, index)) - 1)


def read_layer(pdf: pdfium.PdfDocument) -> Layer:
    parts: list[str] = []
    starts: list[int] = []
    raw: list[int] = []
    raws: list[str] = []
    total = 0
    for index in range(len(pdf)):
        page = pdf[index]
        try:
            textpage = page.get_textpage()
            try:
                text = textpage.get_text_range()
            finally:
                textpage.close()
        finally:
            page.close()
        folded = fold(text)
        starts.append(total)
        parts.append(folded.text)
        raw.extend(folded.origin)
        raws.append(text)
        total += len(folded.text)
    return Layer("".join(parts), starts, raw, raws)


def locate(hay: str, needle: str, expected: float, *, limit: int = 5000) -> tuple[int, int] | None:
    """``[a, b)`` of ``hay`` where ``needle`` is, the occurrence nearest ``expected``; by head and tail when
    the whole is not there; None when not found (or, for a short needle, not near ``expected``)."""
    if not needle:
        return None
    best = -1
    at, seen = hay.find(needle), 0
    while at >= 0 and seen < limit:
        if best < 0 or abs(at - expected) < abs(best - expected):
            best = at
        at, seen = hay.find(needle, at + 1), seen + 1
    if best >= 0:
        if len(needle) < SHORT and abs(best - expected) > NEAR:
            return None
        return best, best + len(needle)
    if len(needle) < 2 * ANCHOR:
        return None
    head, tail = needle[:ANCHOR], needle[-ANCHOR:]
    heads: list[int] = []
    at, seen = hay.find(head), 0
    while at >= 0 and seen < limit:
        heads.append(at)
        at, seen = hay.find(head, at + 1), seen + 1
    for h in sorted(heads, key=lambda i: abs(i - expected))[:20]:
        t = hay.find(tail, h + ANCHOR)
        if t >= 0 and 0.8 * len(needle) <= t + ANCHOR - h <= 1.25 * len(needle) + 10:
            return h, t + ANCHOR
    return None


@dataclass(frozen=True)
class OurPage:
    """A page of our text: its number and where it lies in ``Document.text``."""

    number: int
    char_start: int
    char_end: int


def page_for(layer: Layer, ours: Folded, page: OurPage) -> int:
    """The 0-based LibreOffice page that shows the start of our page ``page``."""
    scale = len(layer.text) / max(1, len(ours.text))
    a, b = ours.at(page.char_start), ours.at(page.char_end)
    probe = ours.text[a : min(b, a + PAGE_PROBE)]
    found = locate(layer.text, probe, a * scale) if len(probe) >= SHORT else None
    return layer.page_at(found[0] if found else round(a * scale))


def page_starts(layer: Layer, ours: Folded) -> list[int | None]:
    """Where, in our text, each LibreOffice page after the first starts: one offset of our text per page,
    increasing, or None for a page not found there.

    A page is found by the folded text it starts with (``PAGE_PROBE`` characters, the occurrence nearest
    where its share of the layer puts it), searched after the page before it; when that is a running header
    our text lacks, by the text after the page's first line. A page not found (a picture, a text our
    converter leaves out) is None: it stays a page, empty, so the pages after it keep their numbers."""
    scale = len(ours.text) / max(1, len(layer.text))
    starts: list[int | None] = []
    last = -1
    for index in range(1, layer.page_count):
        a = layer.starts[index]
        b = layer.starts[index + 1] if index + 1 < layer.page_count else len(layer.text)
        # searched after the page before, within a few pages' length: the search stays linear in the text
        window = ours.text[last + 1 : last + 1 + PAGE_WINDOW * max(b - a, NEAR)]
        found = None
        for begin in (a, _second_line(layer, index, a, b)):
            probe = layer.text[begin : min(b, begin + PAGE_PROBE)]
            if len(probe) >= SHORT:
                found = locate(window, probe, begin * scale - last - 1)
                if found is not None:
                    break
        if found is None:
            starts.append(None)
        else:
            last += 1 + found[0]
            starts.append(ours.origin[last])
    return starts


def _second_line(layer: Layer, index: int, a: int, b: int) -> int:
    """The folded index where page ``index``'s second raw line starts (``a`` when it has one line)."""
    newline = layer.raws[index].find("\n")
    return a if newline < 0 else bisect_left(layer.raw, newline + 1, a, b)


def split_pages(text: str, starts: Sequence[int | None]) -> list[str]:
    """``text`` cut into ``len(starts) + 1`` pages at ``starts`` (from :func:`page_starts`), each cut moved
    back to the start of its line so a heading's Markdown marks stay with it; a page without a start is
    empty, just before the next page found. ``"".join`` of the pages is ``text``."""
    found: list[int | None] = []
    previous = 0
    for at in starts:
        if at is None:
            found.append(None)
            continue
        line = text.rfind("\n", 0, at) + 1
        previous = line if line > previous else max(at, previous)
        found.append(previous)
    cuts: list[int] = []
    following = len(text)
    for cut in reversed(found):
        following = following if cut is None else cut
        cuts.append(following)
    cuts.reverse()
    bounds = [0, *cuts, len(text)]
    return [text[i:j] for i, j in zip(bounds, bounds[1:])]


def span_json(
    pdf: pdfium.PdfDocument, layer: Layer, ours: Folded, start: int, end: int, pages: Sequence[OurPage]
) -> dict:
    """The LibreOffice page each of our pages touched by ``[start, end)`` is shown as, and the quote's
    boxes on it, as JSON-ready data: ``{"pages": [frame + "pdf_page", "pdf_pages", "located", "note"],
    "boxes": [...], "notes": [...]}`` (the pages' notes, for a reader). A box's ``page`` is our page's
    number (the page image it is drawn over)."""
    scale = len(layer.text) / max(1, len(ours.text))
    frames: list[dict] = []
    boxes: list[dict] = []
    notes: list[str] = []
    for page in pages:
        a_off, b_off = max(start, page.char_start), min(end, page.char_end)
        if a_off >= b_off and not (start == end and page.char_start <= start <= page.char_end):
            continue
        a, b = ours.at(a_off), ours.at(b_off)
        found = locate(layer.text, ours.text[a:b], a * scale)
        if found is None:
            shown = page_for(layer, ours, page)
            note = (
                f"The quote's words on page {page.number} are not found on the pages LibreOffice laid out: "
                f"its page {shown + 1}, where page {page.number} starts, is shown without a box."
            )
            frames.append(_frame(pdf, shown, page.number, layer, located=False, note=note))
            notes.append(note)
            continue
        shown = layer.page_at(found[0])
        last = layer.page_at(found[1] - 1)
        note = (
            f"The quote goes on from LibreOffice's page {shown + 1} to its page {last + 1}; "
            f"page {shown + 1} is shown."
            if last != shown
            else ""
        )
        frames.append(_frame(pdf, shown, page.number, layer, located=True, note=note))
        if note:
            notes.append(note)
        # the quote's own marks before its first letter or digit and after its last: "($2,500)", "month."
        lead = ours.origin[a] - a_off if a < len(ours.origin) else 0
        trail = b_off - ours.origin[b - 1] - 1 if b > a else 0
        to = min(found[1], _page_end(layer, shown))
        boxes.extend(_boxes(pdf, layer, found[0], to, shown, page.number, lead=lead, trail=trail))
    return {"pages": frames, "boxes": boxes, "notes": notes}


def _page_end(layer: Layer, index: int) -> int:
    return layer.starts[index + 1] if index + 1 < layer.page_count else len(layer.text)


def _frame(
    pdf: pdfium.PdfDocument, index: int, ours: int, layer: Layer, *, located: bool, note: str = ""
) -> dict:
    page = pdf[index]
    try:
        frame = replace(page_frame(pdf, page, index + 1), number=ours, label="").as_json()
    finally:
        page.close()
    return {**frame, "pdf_page": index + 1, "pdf_pages": layer.page_count, "located": located, "note": note}


def _boxes(
    pdf: pdfium.PdfDocument,
    layer: Layer,
    a: int,
    b: int,
    index: int,
    ours: int,
    *,
    lead: int = 0,
    trail: int = 0,
) -> list[dict]:
    """The line rectangles of folded characters ``[a, b)``, all on 0-based page ``index``, with the marks
    between them (a "%" or "," folding leaves out is drawn, and does not split a line's rectangle) and up
    to ``lead`` marks before the first and ``trail`` after the last (the quote's own: "(", "$", ".")."""
    page = pdf[index]
    try:
        frame = page_frame(pdf, page, index + 1)
        textpage = page.get_textpage()
        try:
            raw_text = layer.raws[index]
            utf16 = _utf16_offsets(raw_text)
            rects: list[list[float]] = []
            last_raw, last_char = -1, -1
            first = _marks_beside(raw_text, layer.raw[a], -1, lead)
            last = _marks_beside(raw_text, layer.raw[b - 1], 1, trail)
            for at in range(first, last + 1):
                if raw_text[at].isspace():
                    continue
                char = pdfium_c.FPDFText_GetCharIndexFromTextIndex(textpage.raw, utf16[at] if utf16 else at)
                if char < 0 or char == last_char:  # "ﬁ" folded to "fi": one glyph
                    continue
                box = glyph_box(textpage, char)
                if box is None:
                    continue
                add_to_lines(rects, box, line_break=last_raw >= 0 and "\n" in raw_text[last_raw:at])
                last_raw, last_char = at, char
        finally:
            textpage.close()
    finally:
        page.close()
    return [
        Box(ours, r[0], r[1], r[2], r[3], *frame.fractions(r[0], r[1], r[2], r[3])).as_json() for r in rects
    ]


def _marks_beside(raw: str, at: int, step: int, most: int) -> int:
    """The raw index ``at`` moved by ``step`` over up to ``most`` marks next to it (neither letter, digit
    nor space)."""
    while most > 0 and 0 <= at + step < len(raw):
        ch = raw[at + step]
        if ch.isspace() or ch.isalnum():
            break
        at, most = at + step, most - 1
    return at
