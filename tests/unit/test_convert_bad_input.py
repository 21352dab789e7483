"""Bad input of any kind: empty, invisible or too large files, ZIP bombs, damaged archives and
damaged Office parts are refused with a code and words, never a crash or gigabytes of memory.
"""

from __future__ import annotations

import io
import zipfile

import pytest

from ingest import sniff
from ingest.convert import ConversionError, convert_file
from tests.unit.convert_helpers import expect, make_deck, make_docx, make_pdf, make_pptx, make_xlsx, write


def test_empty_file(tmp_path):
    expect("empty", write(tmp_path, "empty.pdf", b""))
    expect("empty", write(tmp_path, "blank.txt", b"  \n\n \t "))


def test_a_file_of_invisible_characters_only_is_empty(tmp_path):
    # zero-width spaces, joiners and byte-order marks are not whitespace to str.strip(): such a file became a
    # "ready" document of blank pages, with nothing to find, quote or review
    invisible = "\u200b\u200c\u200d\u2060\ufeff \n\u00ad\u200b\n" * 50
    expect("empty", write(tmp_path, "blank.txt", invisible.encode("utf-8")))
    expect("empty", write(tmp_path, "blank.md", invisible.encode("utf-8")))
    expect(
        "empty",
        write(tmp_path, "blank.html", f"<html><body><p>{invisible}</p></body></html>".encode()),
    )
    # one word among them is a document
    assert "Fee" in convert_file(write(tmp_path, "fee.txt", (invisible + "Fee $247.83").encode("utf-8"))).text


def test_too_large(tmp_path):
    expect("too_large", write(tmp_path, "big.pdf", make_pdf(pages=1)), max_bytes=100)


def test_zip_bomb_by_ratio(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", b"\0" * (20 * 1024 * 1024))
    error = expect("zip_bomb", write(tmp_path, "bomb.docx", buffer.getvalue()))
    assert "decompression bomb" in error.message


def test_a_deck_of_five_thousand_slides_is_not_a_bomb():
    # a real 5,000-slide deck (4.2 MB, 6.8 MB unpacked) has 10,036 parts, two a slide: it was refused as a bomb
    # by a 10,000-part limit though nothing in it expands more than a few times
    data = make_deck(5000)
    parts = zipfile.ZipFile(io.BytesIO(data)).infolist()
    assert len(parts) == 10_036 and sum(p.file_size for p in parts) < 3 * len(data)
    sniff.check_zip_safety(data)
    assert sniff.sniff_kind(data, "deck.pptx") == "pptx"


def test_many_small_parts_that_expand_far_together_are_a_bomb(tmp_path):
    # each part is under the size at which its own ratio is checked; together they expand 150 times
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("ppt/presentation.xml", "<p:presentation/>")
        for n in range(9_000):
            archive.writestr(f"ppt/slides/slide{n}.xml", b"\0" * 3000)
    error = expect("zip_bomb", write(tmp_path, "bomb.pptx", buffer.getvalue()))
    assert "decompression bomb" in error.message


def test_a_zip_of_more_parts_than_the_cap_is_refused_before_its_directory_is_read():
    # empty parts expand nothing, but each costs its directory entry and a converter's handling: refused on
    # the count the end of the archive announces, without building the whole directory in memory
    import tracemalloc

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        for n in range(sniff.MAX_MEMBERS):
            archive.writestr(f"p/{n}", b"")
    data = buffer.getvalue()
    tracemalloc.start()
    kind = sniff.content_kind(data)  # what intake reads, in the web process
    with pytest.raises(ConversionError) as refused:
        sniff.check_zip_safety(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert kind == "zip" and refused.value.code == "zip_bomb" and peak < 1024 * 1024


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
