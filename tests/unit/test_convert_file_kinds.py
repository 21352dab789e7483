"""Which kind a file is, from its bytes: an extension that lies, unsupported and legacy formats,
text that only mentions PDF, and password-protected Office files.
"""

from __future__ import annotations

import io

import pytest

from ingest.convert import ConversionError, convert_file, sniff_kind
from tests.unit.convert_helpers import expect, make_docx, make_pdf, make_pptx, make_xlsx, write


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
    payload = {
        "pdf": make_pdf(pages=1),
        "docx": make_docx(),
        "xlsx": make_xlsx(),
        "text": b"Just some text.\n",
    }[data]
    error = expect("type_mismatch", write(tmp_path, name, payload), filename=name)
    assert name in error.message


def test_unsupported_formats(tmp_path):
    expect("unsupported", write(tmp_path, "old.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600))
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (10, 10)).save(buffer, format="PNG")
    expect("unsupported", write(tmp_path, "photo.png", buffer.getvalue()))


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
    for data, words in (
        (b"Line one\x0bline two.\fPage two.", "Page two."),
        (b"Fees are due in 30 days.\r\n\x1a", "30 days."),
    ):
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
    from ingest.intake import SNIFF_BYTES, IntakeError, check_kind

    locked = cfb("Root Entry", "EncryptionInfo", "EncryptedPackage", filler=SNIFF_BYTES + 4096)
    with pytest.raises(IntakeError) as caught:
        check_kind(io.BytesIO(locked), locked[:SNIFF_BYTES], "NDA.docx", len(locked))
    assert caught.value.code == "encrypted" and "NDA.docx" in caught.value.message
