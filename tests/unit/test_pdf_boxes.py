"""A cited span of a PDF's converted text maps to the rectangles of its own glyphs on each page it touches.

PDFs are made here with fpdf2 (and turned or cropped with pypdfium2). Every rectangle is checked on its own
terms: the text pdfium reads inside it (``get_text_bounded``) is the quote's part on that line, and the
ink of the drawn page lies inside it where the viewer draws it (``left .. bottom`` fractions).
"""

from __future__ import annotations

import io
import re
import unicodedata
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from fpdf import FPDF

from ingest.pages import join_pages
from ingest.pdf_boxes import Box, PageSlice, span_boxes
from ingest.pdf_pages import extract_pdf_pages, load_page, open_with_forms, traced_page_text

PROSE = (
    "The Supplier shall indemnify and hold harmless the Buyer from and against any and all claims, "
    "losses and damages arising out of any breach of this Agreement. "
)
QUOTE = "Customer may terminate this Agreement for convenience on forty-five (45) days' prior written notice"
DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")  # Debian fonts-dejavu-core (make browser)
OPENED: list[pdfium.PdfDocument] = []


@pytest.fixture(autouse=True)
def _close_pdfs():
    yield
    while OPENED:
        OPENED.pop().close()


class Converted:
    """A PDF as the converter reads it: the document text, its pages, and the PDF opened as it opens it."""

    def __init__(self, data: bytes):
        self.data = data
        self.text, spans = join_pages(extract_pdf_pages(data).pages)
        self.pages = [PageSlice(s.number, s.char_start, self.text[s.char_start : s.char_end]) for s in spans]
        self.pdf = open_with_forms(data)
        OPENED.append(self.pdf)

    def span(self, quote: str) -> tuple[int, int]:
        """Where ``quote`` is in the text, its spaces matching the text's line breaks."""
        found = re.search(r"\s+".join(re.escape(w) for w in quote.split()), self.text)
        assert found, quote
        return found.span()

    def boxes(self, quote: str) -> list[Box]:
        start, end = self.span(quote)
        return span_boxes(self.pdf, start, end, self.pages)[1]

    def read(self, box: Box) -> str:
        """What pdfium reads inside the rectangle, drawn in a little (pdfium counts in any glyph whose box
        touches the rectangle: the neighbour a loose box abuts, the descender of the line above)."""
        return read_inside(self.pdf, box)

    def ink(self, box: Box, width: int = 1000) -> float:
        """The share of dark pixels of the page drawn as a viewer shows it, inside the box's fractions."""
        page = self.pdf[box.page - 1]
        w, _h = page.get_size()
        image = page.render(scale=width / w).to_pil().convert("L")
        page.close()
        W, H = image.size
        crop = image.crop(
            (int(box.left * W), int(box.top * H), int(box.right * W) + 1, int(box.bottom * H) + 1)
        )
        pixels = list(crop.get_flattened_data())
        return sum(1 for p in pixels if p < 128) / max(len(pixels), 1)


def read_inside(pdf: pdfium.PdfDocument, box: Box) -> str:
    """The text pdfium reads inside ``box``, drawn in by a point at each side (at most 15% of its height),
    a quarter of its height from the top and a tenth from the bottom."""
    page = load_page(pdf, box.page - 1)
    textpage = page.get_textpage()
    height = box.y1 - box.y0
    side = min(1.0, 0.15 * height)
    try:
        return textpage.get_text_bounded(
            box.x0 + side, box.y0 + 0.1 * height, box.x1 - side, box.y1 - 0.25 * height
        )
    finally:
        textpage.close()
        page.close()


def same(a: str, b: str) -> bool:
    """Equal but for whitespace, pdfium's line-break hyphen mark and the forms NFC unifies."""

    def norm(s: str) -> str:
        return re.sub(r"\s+", "", unicodedata.normalize("NFC", s.replace("\ufffe", "-").replace("\x02", "-")))

    return norm(a) == norm(b)


def check_lines(doc: Converted, quote: str, boxes: list[Box], parts: list[str]) -> None:
    assert [doc.read(b) for b in boxes] and len(boxes) == len(parts), ([doc.read(b) for b in boxes], parts)
    for box, part in zip(boxes, parts):
        assert same(doc.read(box), part), (doc.read(box), part)
        assert 0 <= box.left < box.right <= 1 and 0 <= box.top < box.bottom <= 1
        assert doc.ink(box) > 0.05, box  # glyphs are drawn where the box is


def where_pdfium_puts(doc: Converted, boxes: list[Box]) -> None:
    """Each box's top-left user space corner lands where pdfium's own page-to-device mapping (what drawing
    the page uses, crop box and /Rotate included) puts it: on one of the box's shown corners."""
    page = doc.pdf[boxes[0].page - 1]
    width, height = page.get_size()
    scale = 10
    for box in boxes:
        dx, dy = pdfium_c.c_int(), pdfium_c.c_int()
        pdfium_c.FPDF_PageToDevice(
            page.raw, 0, 0, int(width * scale), int(height * scale), 0, box.x0, box.y1, dx, dy
        )
        x, y = dx.value / (width * scale), dy.value / (height * scale)
        assert min(abs(x - box.left), abs(x - box.right)) < 0.002, (x, box)
        assert min(abs(y - box.top), abs(y - box.bottom)) < 0.002, (y, box)
    page.close()


def one_page(*paragraphs: str, size: int = 11) -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=size)
    pdf.add_page()
    for paragraph in paragraphs:
        pdf.multi_cell(0, 6, paragraph)
        pdf.ln(4)
    return bytes(pdf.output())


def turned(data: bytes, *, rotate: int = 0, crop: tuple[float, float, float, float] | None = None) -> bytes:
    pdf = pdfium.PdfDocument(data)
    page = pdf[0]
    if rotate:
        page.set_rotation(rotate)
    if crop:
        page.set_cropbox(*crop)
    page.close()
    buffer = io.BytesIO()
    pdf.save(buffer)
    return buffer.getvalue()


def test_a_quote_over_two_lines_is_one_rectangle_per_line_holding_exactly_its_words():
    doc = Converted(one_page(PROSE, PROSE + QUOTE + " to Supplier. " + PROSE))
    start, end = doc.span(QUOTE)
    parts = [p for p in doc.text[start:end].split("\n") if p.strip()]
    assert len(parts) >= 2  # the quote wraps
    boxes = doc.boxes(QUOTE)
    check_lines(doc, QUOTE, boxes, parts)
    assert all(b.page == 1 for b in boxes)
    assert boxes[0].top < boxes[1].top  # in reading order, down the page


def test_the_text_the_boxes_are_read_from_is_the_converters_own():
    data = one_page(PROSE * 3, "Fees: $247.83 per pallet;\tnet 30.  Due\u00a0on receipt.")
    pages = extract_pdf_pages(data).pages
    pdf = open_with_forms(data)
    page = load_page(pdf, 0)
    textpage = page.get_textpage()
    traced = traced_page_text(textpage)
    raw = textpage.get_text_range()
    assert traced.text == pages[0]
    for ch, origin in zip(traced.text, traced.origins):  # each character leads to the raw one it came from
        assert origin == -1 or ch in " \n" or raw[origin] == ch


@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_a_rotated_page_gets_its_boxes_where_the_viewer_shows_the_words(rotate):
    doc = Converted(turned(one_page(PROSE, QUOTE + ". " + PROSE), rotate=rotate))
    boxes = doc.boxes(QUOTE)
    start, end = doc.span(QUOTE)
    check_lines(doc, QUOTE, boxes, [p for p in doc.text[start:end].split("\n") if p.strip()])
    where_pdfium_puts(doc, boxes)


def test_a_cropped_page_gets_its_boxes_inside_the_crop():
    doc = Converted(turned(one_page(PROSE, QUOTE + ". " + PROSE), crop=(20, 500, 560, 830)))
    assert doc.pdf[0].get_size() == (540, 330)
    boxes = doc.boxes(QUOTE)
    start, end = doc.span(QUOTE)
    check_lines(doc, QUOTE, boxes, [p for p in doc.text[start:end].split("\n") if p.strip()])
    where_pdfium_puts(doc, boxes)


def test_a_quote_in_the_right_column_is_boxed_in_the_right_column_only():
    pdf = FPDF()
    pdf.set_font("Helvetica", size=10)
    pdf.add_page()
    with pdf.text_columns(ncols=2, gutter=12) as cols:
        cols.write("LEFT COLUMN. " + PROSE * 3)
        cols.new_column()
        cols.write("RIGHT COLUMN. " + QUOTE + " to Supplier. " + PROSE)
    doc = Converted(bytes(pdf.output()))
    boxes = doc.boxes(QUOTE)
    start, end = doc.span(QUOTE)
    check_lines(doc, QUOTE, boxes, [p for p in doc.text[start:end].split("\n") if p.strip()])
    assert all(b.left > 0.5 for b in boxes)


def test_a_quote_across_a_page_break_is_boxed_on_both_pages():
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 6, PROSE * 2 + "Customer may terminate this Agreement")
    pdf.add_page()
    pdf.multi_cell(0, 6, "for convenience on forty-five (45) days' prior written notice. " + PROSE)
    doc = Converted(bytes(pdf.output()))
    start = doc.text.index("Customer may terminate")
    end = doc.text.index("written notice") + len("written notice")
    boxes = span_boxes(doc.pdf, start, end, doc.pages)[1]
    assert {b.page for b in boxes} == {1, 2}
    assert same(doc.read([b for b in boxes if b.page == 1][-1]), "Customer may terminate this Agreement")
    assert same(
        doc.read([b for b in boxes if b.page == 2][0]),
        "for convenience on forty-five (45) days' prior written notice",
    )


def test_a_hyphenated_line_end_is_boxed_on_both_lines():
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    for line in (
        "The Supplier shall pay all amounts and indem-",
        "nify the Buyer against every claim made under",
        "it.",
    ):
        pdf.cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
    doc = Converted(bytes(pdf.output()))
    quote = "indem-nify the Buyer"  # pdfium joins the two lines at its hyphen mark; the converter keeps "-"
    boxes = doc.boxes(quote)
    check_lines(doc, quote, boxes, ["indem-", "nify the Buyer"])


def test_a_ligature_glyph_is_boxed_with_its_word():
    pdf = FPDF()
    pdf.add_font("DejaVu", fname=str(DEJAVU))
    pdf.set_font("DejaVu", size=11)
    pdf.add_page()
    pdf.multi_cell(
        0, 6, "The annual \ufb01nancial statements are audited by an independent \ufb01rm of accountants."
    )
    doc = Converted(bytes(pdf.output()))
    quote = "financial statements are audited"  # "ﬁ" is one glyph, read as "fi"
    boxes = doc.boxes(quote)
    check_lines(doc, quote, boxes, [quote])
    assert same(doc.read(boxes[0]).replace("\ufb01", "fi"), quote)


def test_a_text_layer_out_of_reading_order_still_boxes_the_quotes_own_glyphs():
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    pdf.set_xy(10, 200)  # written first, drawn low on the page
    pdf.multi_cell(150, 6, "SECOND PARAGRAPH written first. " + PROSE)
    pdf.set_xy(10, 30)  # written last, drawn at the top
    pdf.multi_cell(
        150, 6, "FIRST PARAGRAPH at the top. Payment is due within thirty (30) days of the invoice date."
    )
    doc = Converted(bytes(pdf.output()))
    assert doc.text.index("SECOND") < doc.text.index("FIRST")  # the text layer's order, not the page's
    quote = "Payment is due within thirty (30) days"
    boxes = doc.boxes(quote)
    check_lines(doc, quote, boxes, [quote])
    assert boxes[0].top < 0.2


def test_a_stored_text_from_an_older_conversion_is_aligned_to_the_page():
    doc = Converted(one_page(PROSE, QUOTE + ". " + PROSE))
    page = doc.pages[0]
    older = page.text.replace("\n\n", "\n")  # an earlier converter wrote no paragraph gaps
    start = older.index(QUOTE)
    boxes = span_boxes(doc.pdf, start, start + len(QUOTE), [PageSlice(1, 0, older)])[1]
    assert same("".join(doc.read(b) for b in boxes), QUOTE)


def test_page_labels_and_frames_come_with_the_boxes():
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    pdf.set_page_label(label_style="r")
    pdf.multi_cell(0, 6, "Preface. " + PROSE)
    pdf.add_page()
    pdf.set_page_label(label_style="D", label_start=1)
    pdf.multi_cell(0, 6, QUOTE + ". " + PROSE)
    doc = Converted(bytes(pdf.output()))
    frames, boxes = span_boxes(doc.pdf, *doc.span(QUOTE), doc.pages)
    assert [f.number for f in frames] == [2] and frames[0].label == "1"
    assert doc.pdf.get_page_label(0) == "i"
    assert round(frames[0].width) == 595 and frames[0].rotation == 0
