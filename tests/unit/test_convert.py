"""Conversion units: exact PDF pages, Office formats, and every kind of bad input.

Fixtures are made in the test with fpdf2, python-docx, python-pptx, openpyxl and zipfile.
"""
from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import pytest
from fpdf import FPDF
from markitdown import StreamInfo

from ingest import sniff
from ingest.convert import ConversionError, convert_file, decode_text, markitdown_instance, sniff_kind
from ingest.pages import page_of
from ingest.pdf_pages import NEEDS_OCR_MESSAGE, PagedConverterResult

CLAUSE = (
    "The Supplier shall indemnify and hold harmless the Buyer from and against any and all "
    "claims, losses and damages arising out of any breach of this Agreement. "
)


def make_pdf(pages: int = 5, table_page: int | None = 3, encrypt: bool = False) -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    if encrypt:
        pdf.set_encryption(owner_password="owner-secret", user_password="user-secret")
    for n in range(1, pages + 1):
        pdf.add_page()
        pdf.multi_cell(0, 6, f"Marker for page {n}. " + CLAUSE * 3)
        if n == table_page:
            with pdf.table() as table:
                for row in (("Item", "Quantity", "Price"), ("Widget", "10", "$247.83"), ("Gadget", "3", "$1,200.00")):
                    cells = table.row()
                    for value in row:
                        cells.cell(value)
            pdf.multi_cell(0, 6, f"After the table on page {n}.")
    return bytes(pdf.output())


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


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def expect(code: str, path: Path, **kwargs) -> ConversionError:
    with pytest.raises(ConversionError) as caught:
        convert_file(path, **kwargs)
    assert caught.value.code == code
    assert caught.value.message and caught.value.message[0].isupper() and caught.value.message.endswith(".")
    return caught.value


# --- PDF ------------------------------------------------------------------------------


def test_pdf_pages_are_exact_including_a_table_page(tmp_path):
    converted = convert_file(write(tmp_path, "contract.pdf", make_pdf(pages=5, table_page=3)))
    assert converted.kind == "pdf" and converted.pages_estimated is False
    assert [p.number for p in converted.pages] == [1, 2, 3, 4, 5]
    assert converted.text.count("\f") == 4
    for n in range(1, 6):
        at = converted.text.index(f"Marker for page {n}.")
        assert page_of(at, converted.pages) == n
        page = converted.pages[n - 1]
        assert f"Marker for page {n}." in converted.text[page.char_start:page.char_end]
    price = converted.text.index("$247.83")
    assert page_of(price, converted.pages) == 3, "a table page keeps its page number"
    assert page_of(converted.text.index("After the table on page 3."), converted.pages) == 3


def filled_form_pdf() -> bytes:
    """A one-page order form whose customer and fee were typed into AcroForm text fields, with a
    reviewer's comment on it."""
    def stream(body: bytes, head: bytes = b"") -> bytes:
        return b"<< " + head + b"/Length %d >>\nstream\n" % len(body) + body + b"\nendstream"

    def field(name: bytes, value: bytes, y: int, appearance: int) -> bytes:
        return (b"<< /Type /Annot /Subtype /Widget /FT /Tx /T (" + name + b") /V (" + value + b") /Rect [180 %d 400 %d]"
                b" /P 3 0 R /F 4 /DA (/F1 12 Tf 0 g) /AP << /N %d 0 R >> >>" % (y, y + 20, appearance))

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
        stream(b"BT /F1 12 Tf 72 720 Td (This Services Agreement is made between the Provider and the Customer"
               b" named below.) Tj 0 -20 Td (Customer name:) Tj 0 -20 Td (Annual fee:) Tj ET"),
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
    result = markitdown_instance().convert_stream(io.BytesIO(make_pdf(pages=2)), stream_info=StreamInfo(extension=".pdf"))
    assert isinstance(result, PagedConverterResult)
    assert len(result.page_texts) == 2


def test_encrypted_pdf(tmp_path):
    error = expect("encrypted", write(tmp_path, "locked.pdf", make_pdf(pages=1, encrypt=True)))
    assert "password" in error.message


def test_scanned_pdf_needs_ocr(tmp_path):
    error = expect("needs_ocr", write(tmp_path, "scan.pdf", image_only_pdf()))
    assert error.message == NEEDS_OCR_MESSAGE


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


# --- generic bad input ------------------------------------------------------------------


def test_empty_file(tmp_path):
    expect("empty", write(tmp_path, "empty.pdf", b""))
    expect("empty", write(tmp_path, "blank.txt", b"  \n\n \t "))


def test_a_file_of_invisible_characters_only_is_empty(tmp_path):
    # zero-width spaces, joiners and byte-order marks are not whitespace to str.strip(): such a file became a
    # "ready" document of blank pages, with nothing to find, quote or review
    invisible = "\u200b\u200c\u200d\u2060\ufeff \n\u00ad\u200b\n" * 50
    expect("empty", write(tmp_path, "blank.txt", invisible.encode("utf-8")))
    expect("empty", write(tmp_path, "blank.md", invisible.encode("utf-8")))
    expect("empty", write(tmp_path, "blank.html", f"<html><body><p>{invisible}</p></body></html>".encode("utf-8")))
    # one word among them is a document
    assert "Fee" in convert_file(write(tmp_path, "fee.txt", (invisible + "Fee $247.83").encode("utf-8"))).text


def test_too_large(tmp_path):
    expect("too_large", write(tmp_path, "big.pdf", make_pdf(pages=1)), max_bytes=100)


@pytest.mark.parametrize(
    "name,data",
    [
        ("contract.docx", "pdf"),
        ("contract.pdf", "docx"),
        ("contract.pdf", "text"),
        ("sheet.docx", "xlsx"),
        ("notes.txt", "pdf"),
    ],
)
def test_extension_that_lies_about_the_content(tmp_path, name, data):
    payload = {"pdf": make_pdf(pages=1), "docx": make_docx(), "xlsx": make_xlsx(), "text": b"Just some text.\n"}[data]
    error = expect("type_mismatch", write(tmp_path, name, payload), filename=name)
    assert name in error.message


def test_unsupported_formats(tmp_path):
    expect("unsupported", write(tmp_path, "old.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600))
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (10, 10)).save(buffer, format="PNG")
    expect("unsupported", write(tmp_path, "photo.png", buffer.getvalue()))


def test_zip_bomb_by_ratio(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", b"\0" * (20 * 1024 * 1024))
    error = expect("zip_bomb", write(tmp_path, "bomb.docx", buffer.getvalue()))
    assert "decompression bomb" in error.message


def test_a_docx_with_an_uncompressed_image_is_not_a_bomb(tmp_path):
    # a white 1000x800 BMP (a signature block, a diagram) deflates about 1000:1: it was refused
    import docx
    from docx.shared import Inches
    from PIL import Image

    image = io.BytesIO()
    Image.new("RGB", (1000, 800), "white").save(image, format="BMP")
    document = docx.Document()
    document.add_paragraph("1. Fees. The Customer shall pay 100 dollars each month.")
    document.add_picture(io.BytesIO(image.getvalue()), width=Inches(2))
    document.add_paragraph("Signed by the parties.")
    buffer = io.BytesIO()
    document.save(buffer)
    media = [i for i in zipfile.ZipFile(buffer).infolist() if i.filename.startswith("word/media/")]
    assert media and media[0].file_size > 100 * media[0].compress_size
    converted = convert_file(write(tmp_path, "signed.docx", buffer.getvalue()))
    assert "Signed by the parties." in converted.text


def test_zip_bomb_by_ratio_in_an_image_folder_still_counts_to_the_total(tmp_path, monkeypatch):
    monkeypatch.setattr(sniff, "MAX_UNZIPPED_BYTES", 10 * 1024 * 1024)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", "<w:document/>")
        archive.writestr("word/media/image1.bmp", b"\0" * (20 * 1024 * 1024))
    expect("zip_bomb", write(tmp_path, "bomb.docx", buffer.getvalue()))


def test_a_docx_with_more_markup_than_a_worker_can_parse_is_too_large_not_gigabytes_of_memory(tmp_path):
    # 51 MB of document.xml (about 10,000 pages), stored uncompressed so that it is no bomb by ratio: parsing it
    # took about 45 bytes of memory per byte, so a file near the 200 MB unpacked limit took gigabytes
    def docx(xml_bytes: int, media_bytes: int = 0) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
            archive.writestr("[Content_Types].xml", "<Types/>")
            archive.writestr("word/document.xml", b"<w:p/>" * (xml_bytes // 6))
            if media_bytes:
                archive.writestr("word/media/image1.png", b"\x89PNG" + b"\0" * media_bytes)
        return buffer.getvalue()

    error = expect("too_large", write(tmp_path, "huge.docx", docx(51 * 1024 * 1024)))
    assert "51 MB of text and markup" in error.message and "the limit is 50 MB" in error.message
    # images are not parsed: a contract with 60 MB of scans and little text passes this rule
    sniff.check_zip_safety(docx(1024 * 1024, media_bytes=60 * 1024 * 1024))


def test_sniffing_an_epub_never_inflates_its_mimetype_member(tmp_path):
    import tracemalloc

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", b"application/epub+zip" + b"\0" * (200 * 1024 * 1024))
        archive.writestr("META-INF/container.xml", "<container/>")
    data = buffer.getvalue()
    assert len(data) < 1024 * 1024  # a 200 MB member in a file under 1 MB
    tracemalloc.start()
    assert sniff.content_kind(data) == "epub"
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20 * 1024 * 1024  # what the directory check needs, not the member
    expect("zip_bomb", write(tmp_path, "book.epub", data))


def test_a_damaged_epub_is_refused_with_words_not_a_crash():
    import random

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", b"application/epub+zip" * 50)
        archive.writestr("META-INF/container.xml", "<x/>" * 100)
    good, rnd = buffer.getvalue(), random.Random(1)
    for _ in range(3000):  # a few bytes damaged here and there: before, zlib.error, EOFError, ValueError, ...
        data = bytearray(good)
        for _ in range(rnd.randint(1, 6)):
            data[rnd.randrange(len(data))] = rnd.randrange(256)
        try:
            sniff.sniff_kind(bytes(data), "book.epub")
        except ConversionError:
            pass


def test_a_zip_with_a_bad_version_needed_is_corrupt_not_a_crash(tmp_path):
    # zipfile raises NotImplementedError for it: that was an "internal" failure, retried on every upload
    data = bytearray(make_docx())
    at = data.index(b"PK\x01\x02")  # the first central directory entry
    data[at + 6 : at + 8] = (255).to_bytes(2, "little")  # "version needed to extract": 25.5
    expect("corrupt", write(tmp_path, "damaged.docx", bytes(data)))
    with pytest.raises(ConversionError) as caught:
        sniff.check_zip_safety(bytes(data))
    assert caught.value.code == "corrupt"


def test_zip_bomb_by_total_size(tmp_path, monkeypatch):
    monkeypatch.setattr(sniff, "MAX_UNZIPPED_BYTES", 1000)
    expect("zip_bomb", write(tmp_path, "big.xlsx", make_xlsx()))


def test_docx_without_a_document_is_corrupt(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("word/styles.xml", "<styles/>")
    expect("corrupt", write(tmp_path, "hollow.docx", buffer.getvalue()))


def damaged_deflate(data: bytes, member: str) -> bytes:
    """``data`` (a ZIP) with the compressed bytes of ``member`` made invalid deflate (block type 3),
    its directory left intact: what a download cut and patched, or a disk error, leaves."""
    import struct

    at = data.index(b"PK\x03\x04")  # the first local header
    while True:
        name_len, extra_len = struct.unpack_from("<HH", data, at + 26)
        if data[at + 30 : at + 30 + name_len].decode() == member:
            start = at + 30 + name_len + extra_len
            return data[:start] + b"\xff" * 8 + data[start + 8 :]
        at = data.index(b"PK\x03\x04", at + 4)


@pytest.mark.parametrize("kind,member", [("docx", "word/document.xml"), ("pptx", "ppt/slides/slide1.xml")])
def test_an_office_file_whose_compressed_text_is_damaged_is_corrupt_not_a_crash(tmp_path, kind, member):
    # zipfile raises zlib.error for it, which the DOCX/PPTX rewriting let through: the document failed as
    # "internal" ("Processing failed unexpectedly ... (error: Error -3 while decompressing data ...)"), the
    # worker logged a traceback, and every upload of the same file was processed again
    data = damaged_deflate({"docx": make_docx, "pptx": make_pptx}[kind](), member)
    expect("corrupt", write(tmp_path, f"damaged.{kind}", data))


# --- text, HTML, Markdown -----------------------------------------------------------------


def test_non_utf8_text_is_decoded_without_crashing(tmp_path):
    converted = convert_file(write(tmp_path, "memo.txt", b"Caf\xe9 \x93quoted\x94 fee \x80100.\n"))
    assert "Café “quoted” fee €100." in converted.text
    assert decode_text(b"\x81\x8d raw bytes") == "\x81\x8d raw bytes"  # latin-1 as the last resort
    # a UTF-8 contract with one stray cp1252 byte stays UTF-8: its "§" and curly quotes are not garbled
    mostly = "\u201cFees\u201d under \u00a7 4.2 \u2014 due in 30 days. ".encode() * 3 + b"Supplier\x92s invoice."
    assert decode_text(mostly) == "\u201cFees\u201d under \u00a7 4.2 \u2014 due in 30 days. " * 3 + "Supplier\ufffds invoice."
    assert decode_text("Pr\u00e9ambule \u00e0 l\u2019accord".encode("cp1252")) == "Pr\u00e9ambule \u00e0 l\u2019accord"
    assert decode_text("Préambule".encode("utf-16")) == "Préambule"
    assert decode_text(b"\xef\xbb\xbfBOM first\r\nline two") == "BOM first\nline two"


NON_LATIN = [
    ("第3条（支払）甲は乙に対し、2026年3月1日までに金1,000,000円を支払う。本契約は日本法に準拠する。\n", "shift_jis"),
    ("第3条（支付）甲方应于2026年3月1日前向乙方支付人民币100,000元。本合同受中华人民共和国法律管辖。\n", "gb18030"),
    ("第3條（付款）甲方應於2026年3月1日前支付乙方新台幣100,000元。本合約受中華民國法律管轄。\n", "big5"),
    ("제3조 (지급) 갑은 2026년 3월 1일까지 을에게 1,000,000원을 지급한다. 본 계약은 대한민국 법률에 따른다.\n", "euc-kr"),
    ("Статья 3. Покупатель оплачивает 100 000 рублей до 1 марта 2026 года. Договор регулируется правом РФ.\n", "cp1251"),
    ("Статья 3. Покупатель оплачивает 100 000 рублей до 1 марта 2026 года. Договор регулируется правом РФ.\n", "koi8-r"),
    ("Άρθρο 3. Ο Αγοραστής καταβάλλει 100.000 ευρώ έως την 1η Μαρτίου 2026. Διέπεται από το ελληνικό δίκαιο.\n", "cp1253"),
]


@pytest.mark.parametrize("text,codec", NON_LATIN, ids=[codec for _, codec in NON_LATIN])
def test_text_in_a_legacy_non_latin_encoding_is_read_in_it(tmp_path, text, codec):
    # a Japanese, Chinese, Korean, Russian or Greek contract saved in its legacy encoding (not UTF-8) was read as
    # cp1252: the document became "ready" with every letter garbled ("–{Œ_–ñ‚Í"), nothing in it to find or quote
    converted = convert_file(write(tmp_path, "contract.txt", text.encode(codec) * 3))
    assert converted.text.strip() == (text * 3).strip()
    page = f"<html><body><p>{text.strip()}</p></body></html>"  # a web page that declares no charset
    assert text.strip() in convert_file(write(tmp_path, "contract.html", page.encode(codec))).text
    # Western text in cp1252 stays cp1252
    for western in ("Der Käufer zahlt den Kaufpreis binnen 30 Tagen; Gerichtsstand ist München, Gewährleistung zwei Jahre.",
                    "Le présent contrat est régi par le droit français ; les parties élisent domicile à leur siège.",
                    "Fee schedule: café service at €100 per month — payable on receipt, “net” of taxes."):
        assert decode_text(western.encode("cp1252")) == western


# The two Greek code pages agree on every letter but the accented capitals: Ά is byte 0xA2 in cp1253 (where
# ISO 8859-7 has a quotation mark) and 0xB6 in ISO 8859-7 (where cp1253 has a pilcrow).
GREEK_BOTH_WAYS = [
    ("Άρθρο 1. Ορισμοί. Όλοι οι όροι έχουν την έννοια που τους αποδίδεται. Ή η σύμβαση λύεται.\n", "iso8859_7"),
    ("Άρθρο 1. Ορισμοί. Όλοι οι όροι έχουν την έννοια που τους αποδίδεται. Ή η σύμβαση λύεται.\n", "cp1253"),
    ("Ένας Ώρα Ίδιο Ύψος Όρος Ή Άρθρο. Η σύμβαση ισχύει.\n", "cp1253"),
    ("Άρθρο 5. Αποζημίωση. Ο Πωλητής αποζημιώνει τον Αγοραστή. Άρθρο 6. Λύση. Άρθρο 7. Εφαρμοστέο δίκαιο.\n",
     "iso8859_7"),
]


@pytest.mark.parametrize("text,codec", GREEK_BOTH_WAYS, ids=[f"{codec}-{i}" for i, (_, codec) in enumerate(GREEK_BOTH_WAYS)])
def test_greek_text_keeps_its_accented_capitals_in_either_greek_code_page(text, codec):
    # charset_normalizer takes one Greek code page for the other about as often as not: "Άρθρο" (Article) came
    # out as "’ρθρο" or "¶ρθρο"; of the two readings the one with more letters is the text
    assert decode_text(text.encode(codec)) == text


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_text_without_a_byte_order_mark_is_read(tmp_path, codec):
    # some export tools write UTF-16 with no BOM: it was refused as "a binary file"
    text = "Fee: $247.83 due by 1 March 2026 (Pr\u00e9ambule \u00a7 4.2).\nCustomer cust_4711.\n" * 40
    converted = convert_file(write(tmp_path, "memo.txt", text.encode(codec)))
    assert converted.text.strip() == text.strip()
    assert decode_text(text.encode(codec)) == text
    # binary with NULs in both halves of its bytes is still no text
    assert sniff.bare_utf16(bytes(range(256)) * 8) is None


def test_utf8_text_with_a_stray_cp1252_byte_keeps_its_quotes_and_euros():
    # three valid characters, one stray byte: read as cp1252, then latin-1, every quote and "€" was garbled
    text = "The \u201cSupplier\u201d shall deliver the goods. The Customer@@s payment is due. Fee: \u20ac247.83.\n"
    data = text.encode().replace(b"@@", b"\x92")
    assert decode_text(data) == text.replace("@@", "\ufffd")
    # fewer valid characters than stray bytes, and bytes cp1252 leaves undefined: still never latin-1
    data = "Notice \u201dsent\u201d.".encode() + b" Supplier\x92s, Buyer\x92s and Agent\x92s copies."
    assert decode_text(data).startswith("Notice \u201dsent\u201d. Supplier")


def test_text_with_form_feeds_keeps_its_pages(tmp_path):
    converted = convert_file(write(tmp_path, "paged.txt", b"Page one text.\fPage two text.\fPage three text."))
    assert converted.pages_estimated is False
    assert len(converted.pages) == 3
    assert page_of(converted.text.index("Page three"), converted.pages) == 3
    # pdftotext ends every page with a form feed, the last one too: that makes no empty fourth page
    trailing = convert_file(write(tmp_path, "pdftotext.txt", b"Page one text.\fPage two text.\fPage three text.\f"))
    assert len(trailing.pages) == 3


def test_long_text_gets_estimated_pages(tmp_path):
    body = "\n\n".join(f"{i}. " + CLAUSE * 4 for i in range(1, 40)).encode()
    converted = convert_file(write(tmp_path, "long.md", body))
    assert converted.kind == "markdown" and converted.pages_estimated is True
    assert len(converted.pages) > 3
    assert "".join(converted.text.split()) == "".join(body.decode().split()), "nothing lost or added but page breaks"


def test_html_keeps_no_executable_markup(tmp_path):
    html = (
        b"<html><head><script>steal()</script><style>p{}</style></head><body>"
        b"<h1>Services Agreement</h1><p>Payment is due within 30 days.</p>"
        b"<script type='text/javascript'>alert('x')</script>"
        b"<a href='javascript:alert(1)'>click</a><img src=x onerror=alert(2)></body></html>"
    )
    converted = convert_file(write(tmp_path, "page.html", html))
    assert converted.kind == "html"
    assert "Payment is due within 30 days." in converted.text
    lowered = converted.text.lower()
    for bad in ("<script", "alert(", "steal(", "javascript:", "onerror"):
        assert bad not in lowered


def test_markdown_raw_html_is_neutralised(tmp_path):
    md = b"# Terms\n\nFees are due.\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n[pay](javascript:alert(3))\n"
    converted = convert_file(write(tmp_path, "terms.md", md))
    assert "Fees are due." in converted.text
    assert "alert(" not in converted.text and "javascript:" not in converted.text


def test_angle_brackets_in_contract_text_are_kept_in_every_format(tmp_path):
    # "<Base Fee>" is a defined term, not a <base> tag: stripping it (and, with no ">" nearby, the
    # text up to the next ">" paragraphs later) lost contract words
    import docx

    document = docx.Document()
    document.add_paragraph("1. Fees. The Customer shall pay the <Base Fee> plus 2% each month.")
    document.add_paragraph("2. Cap. Liability is capped at <Input Amount> dollars.")
    document.add_paragraph("3. Discounts. Orders of <Meta quantity (see Schedule 2) get 5% off.")
    document.add_paragraph("4. Law. New York law governs. 5. Price > list is forbidden.")
    buffer = io.BytesIO()
    document.save(buffer)
    text = convert_file(write(tmp_path, "angle.docx", buffer.getvalue())).text
    for words in ("the <Base Fee> plus 2%", "capped at <Input Amount> dollars", "Orders of <Meta quantity (see Schedule 2)",
                  "New York law governs", "Price > list"):
        assert words in text

    html = (b"<html><body><p>The Customer shall pay the &lt;Base Fee&gt; plus 2%.</p><p>Orders of &lt;Link units get"
            b" a discount.</p><p>Termination on 90 days notice.</p><p>Price &gt; list is forbidden.</p></body></html>")
    text = convert_file(write(tmp_path, "angle.html", html)).text
    for words in ("the <Base Fee> plus 2%", "Orders of <Link units get a discount.", "Termination on 90 days notice."):
        assert words in text

    md = b"The fee is the <Base Fee> plus 2%. The <Form of Notice> is in Exhibit A.\n\nThe amount <b>shall</b> be paid.\n"
    text = convert_file(write(tmp_path, "angle.md", md)).text
    for words in ("the <Base Fee> plus 2%", "The <Form of Notice> is in Exhibit A.", "The amount <b>shall</b> be paid."):
        assert words in text


def test_markdown_tags_are_removed_only_in_real_tag_shape(tmp_path):
    md = (b"# Terms\n\nFees are <style>p{}</style>due.\n\n<form action=\"https://x.test\">Sign</form> here."
          b" <meta http-equiv=refresh content=0> <input name=a>\n\nA <Link to\nthe schedule> stays.\n")
    text = convert_file(write(tmp_path, "terms.md", md)).text
    assert "Fees are due." in text and "Sign here." in text
    for gone in ("<style", "<form", "</form", "<meta", "<input"):
        assert gone not in text
    assert "A <Link to\nthe schedule> stays." in text  # a newline inside: not a tag


# --- Office formats -----------------------------------------------------------------------


def make_docx(paragraphs: int = 3) -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Master Services Agreement", 1)
    for i in range(paragraphs):
        document.add_paragraph(f"Clause {i + 1}. " + CLAUSE)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def make_xlsx() -> bytes:
    import openpyxl

    workbook = openpyxl.Workbook()
    prices = workbook.active
    prices.title = "Prices"
    prices.append(["Item", "Price"])
    prices.append(["Widget", 247.83])
    terms = workbook.create_sheet("Terms")
    terms.append(["Clause", "Text"])
    terms.append([1, "Payment is due within 30 days."])
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def make_pptx() -> bytes:
    from pptx import Presentation

    deck = Presentation()
    for n in range(1, 4):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Slide title {n}"
        slide.placeholders[1].text = f"Body of slide {n}. Renewal is automatic."
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def test_docx(tmp_path):
    converted = convert_file(write(tmp_path, "msa.docx", make_docx(paragraphs=60)))
    assert converted.kind == "docx" and converted.pages_estimated is True
    assert "# Master Services Agreement" in converted.text
    assert "Clause 60. The Supplier shall indemnify" in converted.text
    assert len(converted.pages) >= 3, "about 3,000 characters per estimated page"


def test_pptx_slides_are_pages(tmp_path):
    converted = convert_file(write(tmp_path, "deck.pptx", make_pptx()))
    assert converted.kind == "pptx" and converted.pages_estimated is False
    assert [p.number for p in converted.pages] == [1, 2, 3]
    for n in (1, 2, 3):
        assert page_of(converted.text.index(f"Body of slide {n}."), converted.pages) == n
    assert "<!--" not in converted.text


def test_xlsx_sheets_are_pages(tmp_path):
    converted = convert_file(write(tmp_path, "prices.xlsx", make_xlsx()))
    assert converted.kind == "xlsx" and converted.pages_estimated is False
    assert len(converted.pages) == 2
    assert page_of(converted.text.index("## Terms"), converted.pages) == 2
    assert page_of(converted.text.index("247.83"), converted.pages) == 1


def test_xlsx_cells_read_as_the_sheet_shows_them(tmp_path):
    # pandas read "N/A"/"NULL" as NaN, wrote empty cells as NaN, "$247.83" as 247.83, "5.00%" as 0.050
    import datetime

    import openpyxl

    workbook = openpyxl.Workbook()
    fees = workbook.active
    fees.title = "Fees"
    fees.append(["Item", "Amount", "Rate", "Due", "Cap", "Notes", "Account"])
    fees.append(["Setup", 247.83, 0.05, datetime.date(2025, 3, 31), "N/A", "NULL", 123])
    fees.append(["Support", 1234567.5, 0.125, datetime.date(2025, 6, 30), "None", "NA", None])
    fees.append(["Credit", -1200, 1, None, None, "", 7])
    for cell, number_format in (("B2", '"$"#,##0.00'), ("B3", "#,##0.00"), ("B4", '"$"#,##0.00;("$"#,##0.00)'),
                                ("C2", "0.00%"), ("C3", "0.0%"), ("C4", "0%"), ("D2", "mm/dd/yyyy"),
                                ("D3", "d mmmm yyyy"), ("G2", "00000"), ("G4", "0.000")):
        fees[cell].number_format = number_format
    workbook.create_sheet("Terms").append(["Note", "Line one\n## Not a sheet"])
    buffer = io.BytesIO()
    workbook.save(buffer)
    converted = convert_file(write(tmp_path, "fees.xlsx", buffer.getvalue()))
    assert converted.kind == "xlsx" and len(converted.pages) == 2
    first = converted.text[converted.pages[0].char_start:converted.pages[0].char_end]
    assert first.splitlines() == [
        "## Fees",
        "| Item | Amount | Rate | Due | Cap | Notes | Account |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        "| Setup | $247.83 | 5.00% | 03/31/2025 | N/A | NULL | 00123 |",
        "| Support | 1,234,567.50 | 12.5% | 30 June 2025 | None | NA |  |",
        "| Credit | ($1,200.00) | 100% |  |  |  | 7.000 |",
    ]
    assert "nan" not in converted.text.lower() and "NaT" not in converted.text
    assert page_of(converted.text.index("## Not a sheet"), converted.pages) == 2  # a cell's text never starts a page


@pytest.mark.parametrize(
    "value,number_format,shown",
    [
        (1234.5, "#,##0", "1,235"),
        (0.0725, "0.00%", "7.25%"),
        (1234567, '#,##0,"K"', "1,235K"),
        (123456789, "000-00-0000", "123-45-6789"),
        (12.5, "[$\u20ac-407] #,##0.00", "\u20ac 12.50"),
        (247.83, "0.00E+00", "2.48E+02"),
        (0.1 + 0.2, "General", "0.3"),
        (3, "@", "3"),
        (2.675, "0.00", "2.68"),  # Excel rounds half away from zero, on the decimal value
    ],
)
def test_xlsx_number_formats(value, number_format, shown):
    from ingest.xlsx import cell_text

    assert cell_text(value, number_format) == shown


@pytest.mark.parametrize("value,number_format,shown", [
    (12345678, "#,##0.0,,", "12.3"), (12345678, '$#,##0.0,,"M"', "$12.3M"), (1.5, "# ?/?", "1.5"),
    (2.5, "# ?/4", "2.5"), (12, '0"/"0', "1/2"),
])
def test_xlsx_scaling_commas_anywhere_and_fractions_keep_the_value(value, number_format, shown):
    from ingest.xlsx import cell_text

    assert cell_text(value, number_format) == shown


def test_an_xlsx_whose_dimension_says_a1_is_read_whole():
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Fees"
    for row in (["Item", "Fee"], ["Support", "$247.83"], ["Licence", "$5,000"]):
        sheet.append(row)
    raw = io.BytesIO()
    book.save(raw)
    fixed = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw.getvalue())) as zin, zipfile.ZipFile(fixed, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":  # as some writers leave it
                data = re.sub(rb'<dimension ref="[^"]*"/>', b'<dimension ref="A1"/>', data)
            zout.writestr(item, data)
    from ingest.xlsx import sheet_pages

    assert "| Licence | $5,000 |" in sheet_pages(fixed.getvalue())[0]


def sparse_xlsx(cells) -> bytes:
    """A workbook whose one sheet holds inline-string ``cells`` ((reference, text), e.g. ("XFD7", "x")), as
    a small hand-written (or hostile) file can: Excel's own writer has no say in where cells lie."""
    rows: dict[int, list[str]] = {}
    for ref, text in cells:
        rows.setdefault(int(re.sub(r"[A-Z]", "", ref)), []).append(f'<c r="{ref}" t="inlineStr"><is><t>{text}</t></is></c>')
    sheet = "".join(f'<row r="{n}">{"".join(row)}</row>' for n, row in sorted(rows.items()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(make_xlsx())) as source, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = re.sub(rb"<sheetData>.*</sheetData>|<sheetData/>", f"<sheetData>{sheet}</sheetData>".encode(), data,
                              flags=re.S)
            out.writestr(item, data)
    return buffer.getvalue()


def _column(n: int) -> str:
    letters = ""
    while n:
        n, rest = divmod(n - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def test_a_sheet_whose_cells_lie_far_apart_costs_memory_for_its_cells_not_their_grid(tmp_path):
    # a row whose only other cell is in column XFD was read as 16,384 cells, every one kept until the sheet
    # was written: a 1 MB workbook of such rows took tens of GB, and the out-of-memory killer took the worker
    import tracemalloc

    from ingest.xlsx import sheet_pages

    data = sparse_xlsx([cell for n in range(1, 301) for cell in ((f"A{n}", f"Item {n}"), (f"XFD{n}", f"Note {n}"))])
    tracemalloc.start()
    pages = sheet_pages(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 16 * 1024 * 1024
    assert "| Item 1 | Note 1 |" in pages[0] and "| Item 300 | Note 300 |" in pages[0]


def test_a_sheet_that_would_be_a_table_of_millions_of_empty_cells_is_refused_with_words(tmp_path, monkeypatch):
    # cells on a diagonal (row n, column n) are a table of n x n cells, nearly all empty: 16,384 such cells in a
    # 200 KB file made a table of 268 million cells, gigabytes of text, and a worker killed for its memory
    from ingest import xlsx

    monkeypatch.setattr(xlsx, "MAX_TABLE_CELLS", 2500)
    error = expect("too_large", write(tmp_path, "diagonal.xlsx", sparse_xlsx([(f"{_column(n)}{n}", f"v{n}") for n in range(1, 60)])))
    assert "“Prices”" in error.message and "59 rows and 59 columns" in error.message
    square = [(f"{_column(c)}{r}", f"{r}.{c}") for r in range(1, 41) for c in range(1, 41)]  # 1,600 cells, all filled
    assert "| 40.1 |" in convert_file(write(tmp_path, "square.xlsx", sparse_xlsx(square))).text


@pytest.mark.parametrize("html", [
    b"<html><head><title>Agreement</title><body><p>The Fee is $247.83 per month.</p></body></html>",  # no </head>
    b"<html><head><meta charset='utf-8'><p>The Fee is $247.83 per month.</p>",
])
def test_html_whose_head_is_not_closed_keeps_its_text(tmp_path, html):
    html = html.replace(b"<html><head>", b"<html><head><noscript>Please enable JavaScript</noscript>")
    text = convert_file(write(tmp_path, "page.html", html)).text
    assert "The Fee is $247.83 per month." in text and "JavaScript" not in text


def test_a_superscript_ordinal_reads_as_written(tmp_path):
    html = b"<html><body><p>Effective on the 15<sup>th</sup> day of March, 2021; fee $5,000<sup>1</sup>.</p></body></html>"
    text = convert_file(write(tmp_path, "page.html", html)).text
    assert "the 15th day of March, 2021" in text and "$5,0001" not in text


def test_exact_values_survive_office_conversion_verbatim(tmp_path):
    from demo import make_workbook_xlsx

    path = tmp_path / "fees.xlsx"
    make_workbook_xlsx(path)
    converted = convert_file(path)
    assert "cust_4711" in converted.text and "cust\\_4711" not in converted.text
    assert "$247.83" in converted.text


# --- sniffing -----------------------------------------------------------------------------


def test_sniff_kind_from_bytes():
    assert sniff_kind(make_pdf(pages=1)[:2048], "a.pdf") == "pdf"
    assert sniff_kind(make_pdf(pages=1)[:2048], "no-extension") == "pdf"
    docx_bytes = make_docx()
    assert sniff_kind(docx_bytes, "a.docx") == "docx"
    assert sniff_kind(docx_bytes[:65536], "a.docx") == "docx"  # only the head: local headers
    assert sniff_kind(make_xlsx(), "upload") == "xlsx"
    assert sniff_kind(make_pptx(), "deck.pptx") == "pptx"
    assert sniff_kind(b"<!DOCTYPE html><html><body>x</body></html>", "page") == "html"
    assert sniff_kind(b"plain words", "notes.md") == "markdown"


def test_text_that_mentions_pdf_or_holds_word_line_breaks_is_text(tmp_path):
    mention = b"This is the contract. Attachments are sent as %PDF-1.4 files.\n"
    assert sniff_kind(mention, "notes.txt") == "text"
    assert "sent as %PDF-1.4 files." in convert_file(write(tmp_path, "notes.txt", mention)).text
    # Word's manual line break is a vertical tab in exported text; ^Z ends old DOS files
    for data, words in ((b"Line one\x0bline two.\fPage two.", "Page two."), (b"Fees are due in 30 days.\r\n\x1a", "30 days.")):
        assert sniff_kind(data, "memo.txt") == "text"
        assert words in convert_file(write(tmp_path, "memo.txt", data)).text
    # a PDF is still a PDF, also with a few bytes before its header (readers accept up to 1 KB)
    assert sniff_kind(b"\0\xff junk\n" + make_pdf(pages=1), "a.pdf") == "pdf"


def cfb(*names: str, filler: int = 0) -> bytes:
    """A compound file (OLE) whose directory, ``filler`` bytes into it, holds entries ``names``."""
    entries = b""
    for name in names:
        encoded = (name + "\0").encode("utf-16-le")
        entries += encoded.ljust(64, b"\0") + len(encoded).to_bytes(2, "little") + b"\x02" + b"\0" * 61
    return b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504 + b"\0" * filler + entries.ljust(512, b"\0")


@pytest.mark.parametrize("name", ["NDA.docx", "prices.xlsx", "deck.pptx", "NDA"])
def test_a_password_protected_office_file_is_encrypted_not_legacy(tmp_path, name):
    # Office writes a password-protected DOCX/XLSX/PPTX as a compound file holding an EncryptedPackage
    locked = cfb("Root Entry", "EncryptionInfo", "EncryptedPackage", filler=512)
    with pytest.raises(ConversionError) as caught:
        sniff_kind(locked, name)
    assert caught.value.code == "encrypted" and "password" in caught.value.message
    expect("encrypted", write(tmp_path, name, locked), filename=name)
    # a legacy Word file is still what it was
    with pytest.raises(ConversionError) as caught:
        sniff_kind(cfb("Root Entry", "WordDocument", "1Table"), "old.doc")
    assert caught.value.code == "unsupported"
    # said as written: "Office" and "ZIP" keep their capitals (capitalize() made them "office", "zip")
    assert caught.value.message.startswith("A legacy Office (.doc/.xls/.ppt) file cannot be reviewed.")


def test_intake_reads_a_whole_compound_file_to_find_its_encryption():
    from ingest.intake import SNIFF_BYTES, IntakeError, _check_kind

    locked = cfb("Root Entry", "EncryptionInfo", "EncryptedPackage", filler=SNIFF_BYTES + 4096)
    with pytest.raises(IntakeError) as caught:
        _check_kind(io.BytesIO(locked), locked[:SNIFF_BYTES], "NDA.docx", len(locked))
    assert caught.value.code == "encrypted" and "NDA.docx" in caught.value.message


def make_epub(body: str = "<h1>Lease Agreement</h1><p>The Tenant shall pay rent monthly.</p><script>alert(1)</script>",
              chapters: dict[str, bytes] | None = None) -> bytes:
    """An EPUB of one chapter holding ``body``, or of ``chapters`` (file name → bytes) read in
    the order given; the manifest lists them the other way round."""
    chapters = chapters or {"c1.xhtml": f"<html><body>{body}</body></html>".encode()}
    ids = {name: f"c{n}" for n, name in enumerate(chapters, start=1)}
    manifest = "".join(f'<item id="{ids[name]}" href="{name}" media-type="application/xhtml+xml"/>'
                       for name in reversed(chapters))
    spine = "".join(f'<itemref idref="{ids[name]}"/>' for name in chapters)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        archive.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Lease</dc:title></metadata>'
            f"<manifest>{manifest}</manifest><spine>{spine}</spine></package>",
        )
        for name, data in chapters.items():
            archive.writestr(f"OEBPS/{name}", data)
    return buffer.getvalue()


def test_epub(tmp_path):
    data = make_epub()
    assert sniff_kind(data, "lease.epub") == "epub"
    converted = convert_file(write(tmp_path, "lease.epub", data))
    assert converted.kind == "epub" and converted.pages_estimated is True
    assert "The Tenant shall pay rent monthly." in converted.text
    assert "alert(" not in converted.text


def test_epub_chapters_are_read_whole_in_their_declared_encoding_and_in_spine_order(tmp_path):
    # markitdown read each chapter's first <body> only, and as UTF-8 whatever it declared
    def xhtml(body: str, encoding: str) -> bytes:
        return (f'<?xml version="1.0" encoding="{encoding}"?><html xmlns="http://www.w3.org/1999/xhtml"><head>'
                f'<meta charset="{encoding}"/><title>Chapter title</title></head><body>{body}</html>').encode(encoding)
    chapters = {
        "ch1.xhtml": xhtml("<h1>1. Definitions</h1><p>Fee is $247.83 for cust_4711.</p></body>"
                           "<body><p>1.2 Second body of chapter one.</p></body><p>Signed: Jane Doe", "utf-8"),
        "ch2.xhtml": xhtml("<h1>2. Payment</h1><p>Zapłata 247,83 zł w ciągu 14 dni; Łódź.</p></body>", "iso-8859-2"),
        "ch3.xhtml": xhtml("<h1>3. Termination</h1><p>Müller § 5 – termination on 30 days.</p></body>", "windows-1252"),
        # UTF-8 with one stray cp1252 byte: read as cp1252 whole, every "ł" and "€" was garbled
        "ch4.xhtml": xhtml("<h1>4. Notices</h1><p>Łódź office; fee €247.83; Supplier@@s address.</p></body>",
                           "utf-8").replace(b"@@", b"\x92"),
    }
    text = convert_file(write(tmp_path, "book.epub", make_epub(chapters=chapters))).text
    in_order = ["1. Definitions", "Fee is $247.83 for cust_4711.", "1.2 Second body of chapter one.", "Signed: Jane Doe",
                "2. Payment", "Zapłata 247,83 zł w ciągu 14 dni; Łódź.", "3. Termination", "Müller § 5 – termination on 30 days.",
                "4. Notices", "Łódź office; fee €247.83; Supplier"]
    for words in in_order:
        assert words in text, (words, text)
    assert [text.index(words) for words in in_order] == sorted(text.index(words) for words in in_order)
    assert "Chapter title" not in text


# --- fidelity: the words and values of a contract come through as written ------------------


def docx_bytes(document) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_a_superscript_never_joins_the_number_before_it(tmp_path):
    # markdownify wrote <sup>/<sub> with no mark at all: "$5,000" + footnote "1" became "$5,0001"
    import docx

    document = docx.Document()
    paragraph = document.add_paragraph("Annual fee of $5,000")
    paragraph.add_run("1").font.superscript = True
    paragraph.add_run(" payable; rate 10")
    paragraph.add_run("2").font.superscript = True
    paragraph.add_run(" per cent; H")
    paragraph.add_run("2").font.subscript = True
    paragraph.add_run("O.")
    html = b"<html><body><p>Annual fee of $5,000<sup>1</sup> payable; rate 10<sup>2</sup> per cent; H<sub>2</sub>O.</p></body></html>"
    texts = {
        "docx": convert_file(write(tmp_path, "fee.docx", docx_bytes(document))).text,
        "html": convert_file(write(tmp_path, "fee.html", html)).text,
        "epub": convert_file(write(tmp_path, "fee.epub", make_epub(html.decode()[12:-14]))).text,
    }
    for kind, text in texts.items():
        assert re.search(r"\$5,000(?!\d)", text), (kind, text)
        assert re.search(r"rate 10(?!\d)", text) and "H2O" not in text, (kind, text)
        assert "payable" in text and "per cent" in text


def docx_with_footnote(before: str, after: str, note: str) -> bytes:
    """A Word file of one paragraph, ``before`` + a footnote reference + ``after``, and the footnote ``note``
    (python-docx writes no footnotes: the part is added to its package by hand)."""
    import docx

    document = docx.Document()
    document.add_paragraph(before + "\ue001" + after)
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    sup = '<w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'
    footnotes = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:footnotes {w}>'
                 '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
                 f'<w:footnote w:id="1"><w:p><w:r>{sup}<w:footnoteRef/></w:r><w:r><w:t xml:space="preserve"> {note}'
                 '</w:t></w:r></w:p></w:footnote></w:footnotes>')
    edits = {
        "word/document.xml": ("\ue001", f'</w:t></w:r><w:r>{sup}<w:footnoteReference w:id="1"/></w:r><w:r>'
                                        '<w:t xml:space="preserve">'),
        "[Content_Types].xml": ("</Types>", '<Override PartName="/word/footnotes.xml" ContentType="application/'
                                            'vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/></Types>'),
        "word/_rels/document.xml.rels": ("</Relationships>", '<Relationship Id="rIdFootnotes" Type="http://schemas.'
                                         'openxmlformats.org/officeDocument/2006/relationships/footnotes" '
                                         'Target="footnotes.xml"/></Relationships>'),
    }
    source, out = zipfile.ZipFile(io.BytesIO(docx_bytes(document))), io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename in edits:
                data = data.decode().replace(*edits[item.filename]).encode()
            package.writestr(item, data)
        package.writestr("word/footnotes.xml", footnotes)
    return out.getvalue()


def test_a_footnote_reference_reads_as_its_mark_not_as_a_link(tmp_path):
    # it was stored "per month.^^[[1]](#footnote-1)^^ Notices", the note "… 20%. [↑](#footnote-ref-1)"
    word = docx_with_footnote("The Licensee shall pay a fee of $5,000 per month.", " Notices go to cust_4711.",
                              "Fees exclude VAT of 20%.")
    html = (b'<html><body><p>A fee of $5,000 per month.<sup><a href="#fn1" id="ref1">[1]</a></sup> Notices go to '
            b'cust_4711. See <a href="#schedule-b">Schedule B</a>.</p><ol><li id="fn1">Fees exclude VAT of 20%.</li>'
            b'</ol></body></html>')
    texts = {"docx": convert_file(write(tmp_path, "fee.docx", word)).text,
             "html": convert_file(write(tmp_path, "fee.html", html)).text}
    for kind, text in texts.items():
        assert "$5,000 per month.^1^ Notices go to cust_4711." in text, (kind, text)
        assert "Fees exclude VAT of 20%." in text and "footnote" not in text and "↑" not in text, (kind, text)
    assert "[Schedule B](#schedule-b)" in texts["html"]  # a link that is no footnote mark stays as written
    markdown = "A fee.^[[1]](#fn1)^\n\n[1]: the note\n"  # a Markdown file's own text is its author's
    assert convert_file(write(tmp_path, "fee.md", markdown.encode())).text.startswith("A fee.^[[1]](#fn1)^")


def test_bold_italic_and_underline_leave_no_marks_inside_values_and_defined_terms(tmp_path):
    # a value or defined term formatted in part was stored as "$<u>247</u>.83", "**cust**_4711",
    # "“**Effective Date**” means": a reviewer's or Claude's plain quote of it could not be found
    import docx

    document = docx.Document()
    document.add_heading("Fees", 1)
    paragraph = document.add_paragraph("The fee is $")
    paragraph.add_run("247").underline = True
    paragraph.add_run(".83 per month for account ")
    paragraph.add_run("cust").bold = True
    paragraph.add_run("_4711.")
    paragraph = document.add_paragraph("“")
    paragraph.add_run("Effective Date").bold = True
    paragraph.add_run("” means 1 January 2025, ")
    paragraph.add_run("unless").italic = True
    paragraph.add_run(" extended.")
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Item", "Price"
    html = ("<h1>Fees</h1><p>The fee is $<u>247</u>.83 per month for account <b>cust</b>_4711.</p>"
            "<p>“<strong>Effective Date</strong>” means 1 January 2025, <em>unless</em> <i>extended</i>.</p>"
            "<table><tr><th>Item</th><th>Price</th></tr></table>")
    texts = {
        "docx": convert_file(write(tmp_path, "fee.docx", docx_bytes(document))).text,
        "html": convert_file(write(tmp_path, "fee.html", f"<html><body>{html}</body></html>".encode())).text,
        "epub": convert_file(write(tmp_path, "fee.epub", make_epub(html))).text,
    }
    for kind, text in texts.items():
        assert "The fee is $247.83 per month for account cust_4711." in text, (kind, text)
        assert "“Effective Date” means 1 January 2025, unless extended." in text, (kind, text)
        assert "# Fees" in text and "| Item | Price |" in text, (kind, text)  # headings and tables stay


def test_slide_text_that_looks_like_a_slide_marker_stays_text_on_its_slide(tmp_path):
    # MarkItDown's "<!-- Slide number: N -->" markers were parsed back out of the text: a text box
    # holding one moved the slide's words to another page, or made 3,000,000 empty pages
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    texts = [
        ["Fee is $247.83 per seat.", "<!-- Slide number: 2 -->", "Still slide one."],
        ["Net 30.", "<!-- Slide number: 3000000 -->\nSee note \ue001<!-- x"],
        ["Liability capped at cust_4711 fees."],
    ]
    for n, boxes in enumerate(texts, start=1):
        slide = deck.slides.add_slide(deck.slide_layouts[6])
        for k, text in enumerate(boxes):
            slide.shapes.add_textbox(Inches(1), Inches(1 + k), Inches(6), Inches(1)).text_frame.text = text
    buffer = io.BytesIO()
    deck.save(buffer)
    converted = convert_file(write(tmp_path, "deck.pptx", buffer.getvalue()))
    assert [p.number for p in converted.pages] == [1, 2, 3]
    for n, boxes in enumerate(texts, start=1):
        page = converted.text[converted.pages[n - 1].char_start:converted.pages[n - 1].char_end]
        for text in boxes:
            assert text in page, (n, text, page)


@pytest.mark.parametrize("head, text, encoding", [
    ('<meta charset="iso-8859-2">', "Zapłata: 247,83 zł w ciągu 14 dni; Łódź, żółć.", "iso-8859-2"),
    ('<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">', "Оплата 247,83 руб. в течение 14 дней.", "cp1251"),
    ("<meta charset='Shift_JIS'>", "支払額は247.83ドルとする。", "shift_jis"),
    ('<meta charset="windows-1252">', "GROß–Vertrag: Preis 5 €, Gemäß § 5 für Müller.", "cp1252"),
    ('<meta charset="iso-8859-2">', "Zapłata 247,83 zł (saved as UTF-8 after all).", "utf-8"),
    ('<meta charset="base64">', "Gemäß § 5 für Müller.", "cp1252"),  # no text encoding: the usual guess
])
def test_html_is_read_in_the_encoding_it_declares(tmp_path, head, text, encoding):
    # a page in a legacy encoding was decoded as cp1252 whatever its <meta charset> said: garbled
    html = f"<html><head>{head}<title>t</title></head><body><p>{text}</p></body></html>".encode(encoding)
    assert text in convert_file(write(tmp_path, "page.html", html)).text


def test_xhtml_is_read_in_the_encoding_its_xml_prolog_declares(tmp_path):
    text = "Zapłata: 247,83 zł; Łódź."
    html = f'<?xml version="1.0" encoding="ISO-8859-2"?><html><body><p>{text}</p></body></html>'.encode("iso-8859-2")
    assert text in convert_file(write(tmp_path, "page.html", html)).text


def test_word_html_list_labels_come_without_conditional_markers(tmp_path):
    # Word's "Save as HTML" writes list labels inside <![if !supportLists]> ... <![endif]>: the
    # markers came out as text glued to the clause number ("if !supportLists1.1 endifFees")
    html = (b"<html><body>"
            b"<p style='mso-list:l0 level2 lfo1'><![if !supportLists]><span style='mso-list:Ignore'>1.1<span>&nbsp;&nbsp; "
            b"</span></span><![endif]>Fees of $247.83 are due.</p>"
            b"<p style='mso-list:l0 level3 lfo1'><![if !supportLists]><span style='mso-list:Ignore'>(a)<span>&nbsp; "
            b"</span></span><![ENDIF]>Sub item for cust_4711.</p></body></html>")
    text = convert_file(write(tmp_path, "word.html", html)).text
    assert re.search(r"^1\.1\s+Fees of \$247\.83 are due\.$", text, re.M), text
    assert re.search(r"^\(a\)\s+Sub item for cust_4711\.$", text, re.M), text
    assert "supportLists" not in text and "endif" not in text.lower()


def test_html_text_outside_the_first_body_is_kept_and_the_head_is_not(tmp_path):
    # only the first <body> was converted: a signature block after </body>, or a second body, was lost
    html = (b"<!DOCTYPE html><html><head><title>Browser tab title</title><style>p{}</style></head>"
            b"<body><p>Clause 1. Fees of $247.83 are due.</p></body>"
            b"<body><p>Clause 2. Account cust_4711.</p></body></html>\n<p>Signed: Jane Doe</p>")
    text = convert_file(write(tmp_path, "page.html", html)).text
    assert text.index("Clause 1. Fees of $247.83 are due.") < text.index("Clause 2. Account cust_4711.") \
        < text.index("Signed: Jane Doe")
    assert "Browser tab title" not in text and "p{}" not in text
    no_body = convert_file(write(tmp_path, "bare.html", b"<html><p>Clause 3. Notices.</p></html>\n<p>tail</p>")).text
    assert "Clause 3. Notices." in no_body and "tail" in no_body


# --- tables: every row keeps its columns ---------------------------------------------------


def table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("|")]


def test_a_merged_down_html_cell_leaves_the_cells_below_in_their_columns(tmp_path):
    # rowspan cells were not counted: "| $12.00 | cust_4712 |" landed under Item | Amount
    html = (b"<html><body><table>"
            b"<tr><th>Item</th><th>Amount</th><th>Account</th></tr>"
            b"<tr><td rowspan='2'>Service fee</td><td>$247.83</td><td>cust_4711</td></tr>"
            b"<tr><td>$12.00</td><td>cust_4712</td></tr>"
            b"<tr><td colspan='2'>Total across</td><td>$259.83</td></tr>"
            b"<tr><td>Setup</td><td rowspan='3'>$99.00</td><td>cust_1</td></tr>"
            b"<tr><td>Support</td></tr>"
            b"<tr><td>Pipe | inside</td><td>a|b</td></tr>"
            b"</table></body></html>")
    rows = table_rows(convert_file(write(tmp_path, "fees.html", html)).text)
    assert rows == [
        "| Item | Amount | Account |",
        "| --- | --- | --- |",
        "| Service fee | $247.83 | cust_4711 |",
        "|  | $12.00 | cust_4712 |",
        "| Total across |  | $259.83 |",
        "| Setup | $99.00 | cust_1 |",
        "| Support |  |  |",
        r"| Pipe \| inside |  | a\|b |",
    ], rows


# --- PPTX automatic numbering ----------------------------------------------------------------


def numbered_deck(paragraphs: list[tuple[str, int, str | None, int | None]], list_style: str = "") -> bytes:
    """One slide, one text box of ``paragraphs`` as (text, level, buAutoNum type or "none", startAt)."""
    from lxml import etree
    from pptx import Presentation
    from pptx.util import Inches

    a = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
    deck = Presentation()
    frame = deck.slides.add_slide(deck.slide_layouts[6]).shapes.add_textbox(Inches(1), Inches(1), Inches(8), Inches(5)).text_frame
    for k, (text, lvl, scheme, start) in enumerate(paragraphs):
        paragraph = frame.paragraphs[0] if k == 0 else frame.add_paragraph()
        paragraph.text, paragraph.level = text, lvl
        ppr = paragraph._p.get_or_add_pPr()
        if scheme == "none":
            etree.SubElement(ppr, a + "buNone")
        elif scheme:
            etree.SubElement(ppr, a + "buAutoNum", type=scheme, **({"startAt": str(start)} if start else {}))
    if list_style:
        body = frame._txBody
        body.remove(body.find(a + "lstStyle"))
        body.insert(1, etree.fromstring(f'<a:lstStyle xmlns:a="{a[1:-1]}">{list_style}</a:lstStyle>'))
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def test_pptx_automatic_numbers_are_written_into_the_text(tmp_path):
    # a:buAutoNum labels ("(a)", "1.", "iv.") were lost: the clause read without its number
    deck = numbered_deck([
        ("Definitions", 0, "arabicPeriod", None),
        ("Fees of $247.83", 1, "alphaLcParenBoth", None),
        ("Account cust_4711", 1, "alphaLcParenBoth", None),
        ("Late fee", 2, "romanLcPeriod", 4),
        ("Payment", 0, "arabicPeriod", None),
        ("Restarted after a shallower paragraph", 1, "alphaLcParenBoth", None),
        ("Scheme changes", 1, "alphaUcPeriod", None),
        ("", 0, "arabicPeriod", None),
        ("Termination", 0, "arabicPeriod", None),
        ("Not numbered", 0, "none", None),
        ("After a plain paragraph", 0, "arabicParenR", 7),
        ("Roman upper", 0, "romanUcPeriod", None),
        ("Alpha period", 0, "alphaLcPeriod", 27),
        ("Both", 0, "arabicParenBoth", None),
    ])
    text = convert_file(write(tmp_path, "deck.pptx", deck)).text
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines == [
        "1. Definitions", "(a) Fees of $247.83", "(b) Account cust_4711", "iv. Late fee", "2. Payment",
        "(a) Restarted after a shallower paragraph", "A. Scheme changes", "3. Termination", "Not numbered",
        "7) After a plain paragraph", "I. Roman upper", "aa. Alpha period", "(1) Both",
    ], text


def test_pptx_numbering_from_the_text_boxs_list_style(tmp_path):
    style = '<a:lvl1pPr><a:buAutoNum type="arabicParenR"/></a:lvl1pPr>'
    deck = numbered_deck([("Notice in writing", 0, None, None), ("Cure within 30 days", 0, None, None),
                          ("Plain line", 0, "none", None)], list_style=style)
    lines = [line for line in convert_file(write(tmp_path, "deck.pptx", deck)).text.splitlines() if line.strip()]
    assert lines == ["1) Notice in writing", "2) Cure within 30 days", "Plain line"]


@pytest.mark.parametrize("hidden", [
    '<div style="display:none">Rebate 3%.</div>',
    "<p hidden>Rebate 3%.</p>",
    "<span style='DISPLAY: None'>Rebate 3%.</span>",
    '<span style="visibility:hidden">Rebate 3%.</span>',
    "<span style='mso-hide:all'>Rebate 3%.</span>",
])
def test_hidden_html_text_is_read_and_reported(tmp_path, hidden):
    # text hidden by display:none or the hidden attribute was read as if visible, with no warning
    html = f"<html><body><p>Fee $247.83.</p>{hidden}<p hidden> </p></body></html>".encode()
    converted = convert_file(write(tmp_path, "page.html", html))
    assert "Rebate 3%." in converted.text
    assert converted.warnings == ["This document contains hidden text; it is included in the text."]
    plain = convert_file(write(tmp_path, "plain.html", b"<html><body><p hidden> </p><p style='display:block'>Fee.</p></body></html>"))
    assert plain.warnings == []
