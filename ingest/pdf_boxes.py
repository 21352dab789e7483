"""Where a span of a PDF's converted text is drawn: the rectangles of its glyphs, page by page.

A citation's offsets index ``Document.text``, which is the converter's page texts joined by
``"\\f"``. For each page the span touches, the converter's own cleaning runs again with origins
(:func:`ingest.pdf_pages.traced_page_text`): every character of the page text leads back to a raw
pdfium character, whose loose box (the font's ascent to descent, what a text selection paints)
is read with ``PdfTextPage.get_charbox``. Glyphs that follow each other on one visual line merge
into one rectangle; a line break of the text, or a jump on the page (a column gutter), starts
another. The offsets follow the text layer's order, so a quote is found by its own glyphs
wherever the layout puts them. A page read by OCR has no glyphs: its boxes are those of the OCR
words the span covers (``Page.ocr_words``, kept by ``ingest.ocr``), merged along their line the
same way, a word cut by the span cut in proportion to its characters.

Coordinates: ``x0, y0, x1, y1`` are PDF user space points, as pdfium gives them (y up, before the
page's /Rotate, within its MediaBox); ``left, top, right, bottom`` are fractions of the page as a
viewer shows it (cropped to the CropBox, turned by /Rotate, y down), what a page image is drawn
over. pdfium calls are not thread-safe: callers hold ``ingest.pdf_pages.PDFIUM_LOCK``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ingest.pdf_pages import load_page, traced_page_text
from ingest.traced import offsets_map

# Two glyphs on one line further apart than this many line heights are in different rectangles
# (the gutter between two columns that pdfium read as one line).
MERGE_GAP = 1.5


@dataclass(frozen=True)
class PageFrame:
    """One page as a viewer shows it."""

    number: int  # 1-based, physical
    width: float  # points, as shown (crop box, then /Rotate)
    height: float
    rotation: int  # degrees clockwise (/Rotate)
    bbox: tuple[float, float, float, float]  # the crop box in user space: left, bottom, right, top
    label: str  # the PDF's page label ("iii", "A-2"); "" when it has none

    def fractions(self, x0: float, y0: float, x1: float, y1: float) -> tuple[float, float, float, float]:
        """(left, top, right, bottom) of a user space rectangle, as fractions of the page shown."""
        left, bottom, right, top = self.bbox
        w, h = (right - left) or 1.0, (top - bottom) or 1.0
        us, vs = ((x0 - left) / w, (x1 - left) / w), ((top - y1) / h, (top - y0) / h)  # unrotated, y down
        corners = [self._turn(u, v) for u in us for v in vs]
        xs, ys = [c[0] for c in corners], [c[1] for c in corners]
        return min(xs), min(ys), max(xs), max(ys)

    def _turn(self, u: float, v: float) -> tuple[float, float]:
        """A point of the unrotated page (fractions, y down) on the page turned clockwise by /Rotate."""
        turns = (self.rotation // 90) % 4
        if turns == 1:
            return 1 - v, u
        if turns == 2:
            return 1 - u, 1 - v
        if turns == 3:
            return v, 1 - u
        return u, v

    def user_space(
        self, left: float, top: float, right: float, bottom: float
    ) -> tuple[float, float, float, float]:
        """(x0, y0, x1, y1) in user space of a rectangle given as fractions of the page shown: the
        inverse of :meth:`fractions`."""
        bl, bb, br, bt = self.bbox
        w, h = (br - bl) or 1.0, (bt - bb) or 1.0
        points = [self._unturn(x, y) for x in (left, right) for y in (top, bottom)]
        xs = [bl + u * w for u, _ in points]
        ys = [bt - v * h for _, v in points]
        return min(xs), min(ys), max(xs), max(ys)

    def _unturn(self, x: float, y: float) -> tuple[float, float]:
        """The point of the unrotated page (fractions, y down) that :meth:`_turn` takes to ``(x, y)``."""
        turns = (self.rotation // 90) % 4
        if turns == 1:
            return y, 1 - x
        if turns == 2:
            return 1 - x, 1 - y
        if turns == 3:
            return 1 - y, x
        return x, y

    def as_json(self) -> dict:
        return {
            "number": self.number,
            "label": self.label,
            "width": round(self.width, 2),
            "height": round(self.height, 2),
            "rotation": self.rotation,
        }


@dataclass(frozen=True)
class Box:
    """One rectangle of a span on one page (see the module's note on coordinates)."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    left: float
    top: float
    right: float
    bottom: float

    def as_json(self) -> dict:
        return {
            "page": self.page,
            **{k: round(getattr(self, k), 2) for k in ("x0", "y0", "x1", "y1")},
            **{k: round(getattr(self, k), 5) for k in ("left", "top", "right", "bottom")},
        }


@dataclass(frozen=True)
class PageSlice:
    """A page of the stored document text: its number, where it starts in the text, and its text."""

    number: int
    char_start: int
    text: str
    words: Sequence[Sequence[float]] | None = None  # a page read by OCR: its words (Page.ocr_words)


def page_frame(pdf: pdfium.PdfDocument, page: pdfium.PdfPage, number: int) -> PageFrame:
    width, height = page.get_size()
    left, bottom, right, top = (float(v) for v in page.get_bbox())
    label = pdf.get_page_label(number - 1) or ""
    return PageFrame(number, width, height, page.get_rotation(), (left, bottom, right, top), label)


def span_boxes(
    pdf: pdfium.PdfDocument, start: int, end: int, pages: Sequence[PageSlice]
) -> tuple[list[PageFrame], list[Box]]:
    """The frames of the pages the span ``[start, end)`` of the document text touches and the
    rectangles of its glyphs on them, in text order. ``pages`` holds (at least) those pages; ``pdf``
    was opened with :func:`ingest.pdf_pages.open_with_forms`, as the converter opens it."""
    frames: list[PageFrame] = []
    boxes: list[Box] = []
    for stored in pages:
        a = max(start, stored.char_start) - stored.char_start
        b = min(end, stored.char_start + len(stored.text)) - stored.char_start
        if a >= b:
            continue
        page = load_page(pdf, stored.number - 1)
        try:
            frame = page_frame(pdf, page, stored.number)
            if stored.words is None:
                textpage = page.get_textpage()
                try:
                    rects = _rectangles(textpage, stored.text, a, b)
                finally:
                    textpage.close()
        finally:
            page.close()
        frames.append(frame)
        if stored.words is not None:
            rects = ocr_rectangles(stored.words, stored.text, a, b, frame.width, frame.height)
            for left, top, right, bottom in rects:
                boxes.append(
                    Box(stored.number, *frame.user_space(left, top, right, bottom), left, top, right, bottom)
                )
            continue
        for x0, y0, x1, y1 in rects:
            boxes.append(Box(stored.number, x0, y0, x1, y1, *frame.fractions(x0, y0, x1, y1)))
    return frames, boxes


def ocr_rectangles(
    words: Sequence[Sequence[float]], text: str, a: int, b: int, width: float, height: float
) -> list[tuple[float, float, float, float]]:
    """The line rectangles (fractions of the page shown: left, top, right, bottom) of the OCR words of a page
    ``width`` x ``height`` points that ``[a, b)`` of its ``text`` covers; a word cut by the span is cut in
    proportion to its characters (OCR knows no glyph boxes). A line break of the text starts a rectangle, as
    for glyphs: the next line's first word lies under the line above, which alone would read as one column."""
    rects: list[list[float]] = []
    last_end = -1
    for start_f, end_f, left, top, right, bottom in words:
        start, end = int(start_f), int(end_f)  # character offsets, stored beside the box's fractions
        if end <= a or start >= b or end <= start:
            continue
        cut_left = (max(a, start) - start) / (end - start)
        cut_right = (end - min(b, end)) / (end - start)
        span = right - left
        box = [
            (left + cut_left * span) * width,
            top * height,
            (right - cut_right * span) * width,
            bottom * height,
        ]
        add_to_lines(rects, box, line_break=last_end >= 0 and "\n" in text[last_end:start])
        last_end = end
    return [(r[0] / width, r[1] / height, r[2] / width, r[3] / height) for r in rects]


def _rectangles(
    textpage: pdfium.PdfTextPage, stored: str, a: int, b: int
) -> list[tuple[float, float, float, float]]:
    """The line rectangles of the glyphs of ``stored[a:b]`` (a page's stored text) on ``textpage``."""
    traced = traced_page_text(textpage)
    fresh = offsets_map(stored, traced.text)
    raw = textpage.get_text_range()
    utf16 = _utf16_offsets(raw)
    rects: list[list[float]] = []
    last_offset, last_char = -1, -1
    for offset in range(a, b):
        if stored[offset].isspace():
            continue
        at = fresh(offset)
        origin = traced.origins[at] if at >= 0 else -1
        if origin < 0:
            continue
        char = pdfium_c.FPDFText_GetCharIndexFromTextIndex(textpage.raw, utf16[origin] if utf16 else origin)
        if char < 0 or char == last_char:  # "ﬁ" spelt "fi": one glyph
            continue
        box = glyph_box(textpage, char)
        if box is None:
            continue
        add_to_lines(rects, box, line_break=last_offset >= 0 and "\n" in stored[last_offset:offset])
        last_offset, last_char = offset, char
    return [(r[0], r[1], r[2], r[3]) for r in rects]


def glyph_box(textpage, char: int) -> tuple[float, float, float, float] | None:
    """The loose box of glyph ``char`` on ``textpage``; None when pdfium has none or it has no area."""
    try:
        box = textpage.get_charbox(char, loose=True)
    except pdfium.PdfiumError:
        return None
    if box[2] - box[0] <= 0 and box[3] - box[1] <= 0:
        return None
    return box


def add_to_lines(rects: list[list[float]], box: Sequence[float], *, line_break: bool) -> None:
    """Add glyph ``box`` to ``rects``: the last rectangle grows over it when the box goes on its line
    (and the text does not break there), else the box starts a rectangle of its own."""
    if rects and not line_break and _same_line(rects[-1], box):
        r = rects[-1]
        r[:] = min(r[0], box[0]), min(r[1], box[1]), max(r[2], box[2]), max(r[3], box[3])
    else:
        rects.append(list(box))


def _same_line(rect: Sequence[float], box: Sequence[float]) -> bool:
    """Whether glyph ``box`` goes on in the line ``rect`` (horizontal text, or a vertical line)."""
    height = min(rect[3] - rect[1], box[3] - box[1])
    width = min(rect[2] - rect[0], box[2] - box[0])
    v_overlap = min(rect[3], box[3]) - max(rect[1], box[1])
    h_overlap = min(rect[2], box[2]) - max(rect[0], box[0])
    if height > 0 and v_overlap >= 0.5 * height:
        return -h_overlap <= MERGE_GAP * height  # the gap between them, when they do not overlap
    if width > 0 and h_overlap >= 0.5 * width:
        return -v_overlap <= MERGE_GAP * width
    return False


def _utf16_offsets(raw: str) -> list[int] | None:
    """The UTF-16 index of each character of ``raw`` (pdfium counts in UTF-16); None when they are the
    same as Python's (no character outside the BMP)."""
    if len(raw.encode("utf-16-le")) == 2 * len(raw):
        return None
    out, pos = [], 0
    for ch in raw:
        out.append(pos)
        pos += 2 if ord(ch) > 0xFFFF else 1
    return out


def text_in(textpage: pdfium.PdfTextPage, boxes: Iterable[Box]) -> list[str]:
    """What pdfium reads inside each rectangle (``get_text_bounded``): the independent check."""
    return [textpage.get_text_bounded(b.x0, b.y0, b.x1, b.y1) for b in boxes]
