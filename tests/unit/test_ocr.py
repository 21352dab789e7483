"""OCR of scanned PDF pages (ingest.ocr through ingest.convert): a scan reads as text with its exact values,
a mixed PDF keeps its text-layer pages, turned and skewed pages read, word boxes sit on their words, and
each way OCR cannot read a scan is a clear ConversionError that leaves no reader running."""

from __future__ import annotations

import threading
import time

import pypdfium2 as pdfium
import pytest

from ingest.convert import convert_file
from ingest.ocr import LOW_CONFIDENCE, OcrOptions, draw_page, parse_tsv, read_pages, skew_angle
from ingest.pages import page_of
from ingest.pdf_boxes import ocr_rectangles
from ingest.pdf_pages import extract_pdf_pages, is_junk
from tests.scan_pdf import (
    CONTRACT_LINES,
    SECOND_PAGE_LINES,
    image_pdf,
    mixed_pdf,
    noisy,
    page_image,
    photographed,
    turned,
)
from tests.unit.convert_helpers import expect, make_pdf, write


def scan(tmp_path, *images, name="scan.pdf"):
    return write(tmp_path, name, image_pdf(list(images)))


def test_a_scanned_contract_reads_as_text_with_its_exact_values_and_pages(tmp_path):
    first, where = page_image(CONTRACT_LINES)
    second, _ = page_image(SECOND_PAGE_LINES)
    done: list[tuple[int, int]] = []
    converted = convert_file(
        scan(tmp_path, first, second), on_ocr_page=lambda n, total: done.append((n, total))
    )

    assert converted.kind == "pdf" and not converted.pages_estimated
    assert [p.number for p in converted.pages] == [1, 2] and converted.text.count("\f") == 1
    text = converted.text
    assert "a monthly fee of $247.83," in text and "thirty (30) days" in text and "1 March 2024" in text
    assert page_of(text.index("$247.83"), converted.pages) == 1
    assert page_of(text.index("Limitation of Liability"), converted.pages) == 2
    assert "SERVICES AGREEMENT\n\n1. Fees." in text  # a paragraph gap is a blank line, as on a text layer
    assert done == [(0, 2), (1, 2), (2, 2)]  # told before the first page and of each page read
    assert set(converted.ocr) == {1, 2}
    for page in converted.ocr.values():
        assert LOW_CONFIDENCE < page.confidence <= 100 and not page.low
    assert any("2 page(s) read by OCR" in w for w in converted.warnings)

    # the words' boxes: "$247.83," is where it was drawn (fractions of the page)
    page = converted.ocr[1]
    at = page.text.index("$247.83")
    (box,) = ocr_rectangles(page.words, page.text, at, at + len("$247.83"), 612, 792)
    x0, y0, x1, y1 = where["$247.83,"]
    w, h = first.size
    assert abs(box[0] - x0 / w) < 0.01 and abs(box[1] - y0 / h) < 0.01 and abs(box[3] - y1 / h) < 0.01
    assert x0 / w < box[2] < x1 / w + 0.01  # without the comma: the span is cut within its word


def test_a_quote_over_three_scanned_lines_is_boxed_line_by_line_to_its_last_word():
    # each line starts at the left margin, under the line above: only the text's line breaks part them
    text = "9.2 Lessee may terminate\nthe second anniversary\nmonths rent. 9.3 Upon expiry"
    words, top = [], 0.30
    for line in text.split("\n"):
        line_start, x = text.index(line), 0.10
        for word in line.split(" "):
            start = line_start + line.index(word)
            words.append((start, start + len(word), x, top, x + 0.012 * len(word), top + 0.012))
            x += 0.012 * len(word) + 0.01
        top += 0.016
    quote_end = text.index("rent.") + len("rent.")
    rects = ocr_rectangles(words, text, 0, quote_end, 612, 792)
    assert len(rects) == 3
    rent = next(w for w in words if text[int(w[0]) : int(w[1])] == "rent.")
    assert abs(rects[2][2] - rent[4]) < 1e-6  # the last line ends at "rent.", not at the line's end
    assert [round(r[1], 3) for r in rects] == [0.30, 0.316, 0.332]


def test_a_mixed_pdf_keeps_its_text_layer_pages_and_reads_the_scanned_one(tmp_path):
    data = mixed_pdf()
    layer = extract_pdf_pages(data)
    assert layer.scanned_pages == [2]
    converted = convert_file(write(tmp_path, "mixed.pdf", data))
    pages = converted.text.split("\f")
    assert pages[0] == layer.pages[0] and pages[2] == layer.pages[2]  # the text layer, untouched
    assert "$247.83" in pages[1] and "Governing Law" in pages[1]
    assert set(converted.ocr) == {2}


def test_a_pdf_with_a_full_text_layer_runs_no_ocr(tmp_path):
    converted = convert_file(
        write(tmp_path, "contract.pdf", make_pdf(pages=3)), ocr=OcrOptions(tessdata="/nonexistent")
    )
    assert converted.ocr == {} and "$247.83" in converted.text


@pytest.mark.parametrize("degrees", [90, 180, 270, 4, -3])
def test_turned_and_skewed_pages_read(tmp_path, degrees):
    image, _ = page_image(CONTRACT_LINES)
    converted = convert_file(scan(tmp_path, turned(image, degrees)))
    assert "a monthly fee of $247.83," in converted.text and "Governing Law" in converted.text
    page = converted.ocr[1]
    assert page.confidence > LOW_CONFIDENCE
    if degrees % 90:
        assert abs(page.skew - degrees) < 0.5  # straightened by the angle it was turned


def test_the_skew_angle_is_measured_within_half_a_degree():
    image, _ = page_image(CONTRACT_LINES + SECOND_PAGE_LINES)
    assert skew_angle(image) == 0.0
    for degrees in (2.0, -5.5, 7.0):
        assert abs(skew_angle(turned(image, degrees)) - degrees) < 0.5


def test_a_photo_of_a_page_at_an_angle_reads_what_it_can_flagged_low(tmp_path):
    image, _ = page_image(CONTRACT_LINES)
    converted = convert_file(scan(tmp_path, photographed(image)))  # no crash: whatever OCR reads is the text
    page = converted.ocr[1]
    assert page.words and converted.text == page.text and "Agreement" in page.text
    clean = convert_file(scan(tmp_path, image, name="clean.pdf")).ocr[1]
    assert page.confidence < clean.confidence - 5  # its confidence says it read worse


def test_a_noisy_scan_reads_with_its_values(tmp_path):
    image, _ = page_image(CONTRACT_LINES)
    converted = convert_file(scan(tmp_path, noisy(image, 0.02)))
    assert "$247.83" in converted.text


def test_a_faded_scan_on_tinted_paper_reads_with_its_values(tmp_path):
    image, _ = page_image(CONTRACT_LINES)
    faded = image.point(lambda v: 120 + v * 110 // 255)  # grey ink (120) on yellowed paper (230)
    converted = convert_file(scan(tmp_path, faded))
    assert "$247.83" in converted.text and "1 March 2024" in converted.text
    assert converted.ocr[1].confidence >= LOW_CONFIDENCE  # read as well as a clean scan: not flagged


def test_a_language_that_is_not_installed_is_a_clear_error(tmp_path):
    image, _ = page_image(CONTRACT_LINES)
    error = expect("ocr_language", scan(tmp_path, image), ocr=OcrOptions(languages="eng+xyz"))
    assert "xyz" in error.message and "OCR_LANGUAGES" in error.message and "installed: eng" in error.message


def test_without_tesseract_a_scan_needs_ocr(tmp_path):
    image, _ = page_image(CONTRACT_LINES)
    error = expect("needs_ocr", scan(tmp_path, image), ocr=OcrOptions(tessdata="/nonexistent/tessdata"))
    assert "Tesseract is not installed" in error.message or "(Tesseract) is not installed" in error.message


def test_a_page_read_past_its_time_limit_is_a_clear_error(tmp_path):
    image, _ = page_image(CONTRACT_LINES)
    error = expect("ocr_failed", scan(tmp_path, image), ocr=OcrOptions(page_timeout=0.005))
    assert "page 1" in error.message and "took longer than" in error.message


def test_a_blank_scan_has_no_text_to_review(tmp_path):
    blank, _ = page_image([])
    expect("empty", scan(tmp_path, blank))


def test_a_huge_page_is_drawn_within_the_pixel_budget(tmp_path):
    image, _ = page_image(CONTRACT_LINES, dpi=20)
    data = image_pdf([image], dpi=1)  # a page 170 x 220 inches
    pdf = pdfium.PdfDocument(data)
    try:
        drawn = draw_page(pdf, 0, OcrOptions(pixel_budget=2_000_000))
    finally:
        pdf.close()
    assert drawn.width * drawn.height <= 2_000_000 and drawn.mode == "L"


def test_stopping_midway_raises_at_once_and_leaves_no_reader_running(tmp_path):
    """What Celery's soft time limit (or a deleted document) does: an exception in the caller's thread while
    pages are read. It comes out of read_pages at once, no page is started after it, and the readers'
    threads (each with its Tesseract) end with the page they were reading."""
    image, _ = page_image(CONTRACT_LINES)
    data = image_pdf([image] * 12)
    pdf = pdfium.PdfDocument(data)
    seen = []

    class Stop(Exception):
        pass

    def stop(done, total):
        seen.append(done)
        if done:
            raise Stop

    started = time.monotonic()
    try:
        with pytest.raises(Stop):
            read_pages(pdf, range(12), OcrOptions(workers=2), on_page=stop)
    finally:
        pdf.close()
    assert time.monotonic() - started < 30
    assert seen == [0, 1]
    deadline = time.monotonic() + 20
    while any(t.name.startswith("ocr") for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [t.name for t in threading.enumerate() if t.name.startswith("ocr")]


def test_the_tsv_becomes_lines_and_paragraphs_with_word_offsets():
    head = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"
    rows = [
        "5\t1\t1\t1\t1\t1\t100\t100\t200\t40\t96.5\tSERVICES",
        "5\t1\t1\t1\t1\t2\t320\t100\t200\t40\t95.5\tAGREEMENT",
        "5\t1\t2\t1\t1\t1\t100\t200\t100\t40\t90\tFee:",
        "5\t1\t2\t1\t1\t2\t210\t200\t100\t40\t88\t\ufb01ve",  # a ligature, spelt out as a text layer's is
        "5\t1\t2\t1\t2\t1\t100\t260\t100\t40\t-1\t ",  # no word
        "5\t1\t2\t1\t2\t2\t100\t260\t150\t40\t70\t$247.83",
    ]
    page = parse_tsv("\n".join([head, *rows]), (1000, 2000))
    assert page.text == "SERVICES AGREEMENT\n\nFee: five\n$247.83"
    assert page.confidence == round((96.5 + 95.5 + 90 + 88 + 70) / 5, 2)
    start, end, left, top, right, bottom = page.words[-1]
    assert page.text[start:end] == "$247.83" and (left, top, right, bottom) == (0.1, 0.13, 0.25, 0.15)


def test_junk_text_layers_are_told_from_words():
    assert not is_junk("The Supplier shall deliver the goods on 1 March 2024 for $247.83 (net).")
    assert not is_junk("ΣΥΜΒΑΣΗ ΠΑΡΟΧΗΣ ΥΠΗΡΕΣΙΩΝ μεταξύ των συμβαλλομένων")
    assert is_junk("\ue001\ue002\ue003 \ue004\ue005 \ufffd\ufffd\ufffd \ue010\ue011")
    assert is_junk("aQxZ bTrW pLmQ zXvK qWeR tYuI oPaS dFgH")
