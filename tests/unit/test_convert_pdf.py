"""PDF conversion: exact pages (a table page too), form fields, and encrypted, scanned, corrupt or
truncated PDFs refused with a code and words.
"""

from __future__ import annotations

import io

from fpdf import FPDF
from markitdown import StreamInfo

from ingest.convert import ConversionError, convert_file, markitdown_instance
from ingest.ocr import OcrOptions
from ingest.pages import page_of
from ingest.pdf_pages import PagedConverterResult
from tests.unit.convert_helpers import expect, make_pdf, write


def image_only_pdf() -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (400, 200), "white")
    ImageDraw.Draw(image).text((20, 80), "SCANNED CONTRACT PAGE", fill="black")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    pdf = FPDF()
    for _ in range(2):
        pdf.add_page()
        pdf.image(io.BytesIO(buffer.getvalue()), x=10, y=10, w=180)
    return bytes(pdf.output())


def test_pdf_pages_are_exact_including_a_table_page(tmp_path):
    converted = convert_file(write(tmp_path, "contract.pdf", make_pdf(pages=5, table_page=3)))
    assert converted.kind == "pdf" and converted.pages_estimated is False
    assert [p.number for p in converted.pages] == [1, 2, 3, 4, 5]
    assert converted.text.count("\f") == 4
    for n in range(1, 6):
        at = converted.text.index(f"Marker for page {n}.")
        assert page_of(at, converted.pages) == n
        page = converted.pages[n - 1]
        assert f"Marker for page {n}." in converted.text[page.char_start : page.char_end]
    price = converted.text.index("$247.83")
    assert page_of(price, converted.pages) == 3, "a table page keeps its page number"
    assert page_of(converted.text.index("After the table on page 3."), converted.pages) == 3


def filled_form_pdf() -> bytes:
    """A one-page order form whose customer and fee were typed into AcroForm text fields, with a
    reviewer's comment on it."""

    def stream(body: bytes, head: bytes = b"") -> bytes:
        return b"<< " + head + b"/Length %d >>\nstream\n" % len(body) + body + b"\nendstream"

    def field(name: bytes, value: bytes, y: int, appearance: int) -> bytes:
        return (
            b"<< /Type /Annot /Subtype /Widget /FT /Tx /T ("
            + name
            + b") /V ("
            + value
            + b") /Rect [180 %d 400 %d]"
            b" /P 3 0 R /F 4 /DA (/F1 12 Tf 0 g) /AP << /N %d 0 R >> >>" % (y, y + 20, appearance)
        )

    xobject = b"/Type /XObject /Subtype /Form /BBox [0 0 220 20] /Resources << /Font << /F1 4 0 R >> >> "
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [5 0 R 7 0 R] /DR << /Font << /F1 4 0 R >> >> >> >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >>"
        b" /Contents 9 0 R /Annots [5 0 R 7 0 R 11 0 R] >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        field(b"customer", b"ACME HOLDINGS LLC", 695, 6),
        stream(b"/Tx BMC BT /F1 12 Tf 2 4 Td (ACME HOLDINGS LLC) Tj ET EMC", xobject),
        field(b"fee", b"USD 247,830.00", 675, 8),
        stream(b"/Tx BMC BT /F1 12 Tf 2 4 Td (USD 247,830.00) Tj ET EMC", xobject),
        stream(
            b"BT /F1 12 Tf 72 720 Td (This Services Agreement is made between the Provider and the Customer"
            b" named below.) Tj 0 -20 Td (Customer name:) Tj 0 -20 Td (Annual fee:) Tj ET"
        ),
        stream(b"BT /F1 10 Tf 2 5 Td (Reviewer: is this fee right?) Tj ET", xobject),
        b"<< /Type /Annot /Subtype /FreeText /Rect [72 600 292 620] /Contents (Reviewer: is this fee right?)"
        b" /DA (/F1 10 Tf 0 g) /AP << /N 10 0 R >> >>",  # a reviewer's comment: not contract text
    ]
    out, offsets = b"%PDF-1.7\n", []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def test_what_was_typed_into_a_pdf_form_is_part_of_its_text(tmp_path):
    converted = convert_file(write(tmp_path, "order-form.pdf", filled_form_pdf()))
    assert "Customer name:" in converted.text
    assert "ACME HOLDINGS LLC" in converted.text and "USD 247,830.00" in converted.text
    assert "Reviewer" not in converted.text
    assert len(converted.pages) == 1


def test_pdf_goes_through_our_registered_converter():
    result = markitdown_instance().convert_stream(
        io.BytesIO(make_pdf(pages=2)), stream_info=StreamInfo(extension=".pdf")
    )
    assert isinstance(result, PagedConverterResult)
    assert len(result.page_texts) == 2


def test_encrypted_pdf(tmp_path):
    error = expect("encrypted", write(tmp_path, "locked.pdf", make_pdf(pages=1, encrypt=True)))
    assert "password" in error.message


def test_scanned_pdf_needs_ocr_where_tesseract_is_not_installed(tmp_path):
    """Read by OCR where Tesseract is installed (tests/unit/test_ocr.py); without it, a clear refusal."""
    error = expect(
        "needs_ocr",
        write(tmp_path, "scan.pdf", image_only_pdf()),
        ocr=OcrOptions(tessdata="/nonexistent/tessdata"),
    )
    assert "scanned pages" in error.message and "OCR" in error.message


def test_corrupt_pdf(tmp_path):
    expect("corrupt", write(tmp_path, "broken.pdf", b"%PDF-1.7\n" + bytes(range(256)) * 20))


def test_truncated_pdf_is_corrupt_or_readable_never_a_crash(tmp_path):
    data = make_pdf(pages=3)
    path = write(tmp_path, "half.pdf", data[: len(data) // 2])
    try:
        converted = convert_file(path)
    except ConversionError as error:
        assert error.code in {"corrupt", "needs_ocr"}
    else:
        assert converted.pages
