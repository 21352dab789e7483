"""EPUB: sniffed and converted without scripts, every chapter read whole, in its declared encoding and in
spine order.
"""

from __future__ import annotations

from ingest.convert import convert_file, sniff_kind
from tests.unit.convert_helpers import make_epub, write


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
        return (
            f'<?xml version="1.0" encoding="{encoding}"?><html xmlns="http://www.w3.org/1999/xhtml"><head>'
            f'<meta charset="{encoding}"/><title>Chapter title</title></head><body>{body}</html>'
        ).encode(encoding)

    chapters = {
        "ch1.xhtml": xhtml(
            "<h1>1. Definitions</h1><p>Fee is $247.83 for cust_4711.</p></body>"
            "<body><p>1.2 Second body of chapter one.</p></body><p>Signed: Jane Doe",
            "utf-8",
        ),
        "ch2.xhtml": xhtml(
            "<h1>2. Payment</h1><p>Zapłata 247,83 zł w ciągu 14 dni; Łódź.</p></body>", "iso-8859-2"
        ),
        "ch3.xhtml": xhtml(
            "<h1>3. Termination</h1><p>Müller § 5 – termination on 30 days.</p></body>", "windows-1252"
        ),
        # UTF-8 with one stray cp1252 byte: read as cp1252 whole, every "ł" and "€" was garbled
        "ch4.xhtml": xhtml(
            "<h1>4. Notices</h1><p>Łódź office; fee €247.83; Supplier@@s address.</p></body>", "utf-8"
        ).replace(b"@@", b"\x92"),
    }
    text = convert_file(write(tmp_path, "book.epub", make_epub(chapters=chapters))).text
    in_order = [
        "1. Definitions",
        "Fee is $247.83 for cust_4711.",
        "1.2 Second body of chapter one.",
        "Signed: Jane Doe",
        "2. Payment",
        "Zapłata 247,83 zł w ciągu 14 dni; Łódź.",
        "3. Termination",
        "Müller § 5 – termination on 30 days.",
        "4. Notices",
        "Łódź office; fee €247.83; Supplier",
    ]
    for words in in_order:
        assert words in text, (words, text)
    assert [text.index(words) for words in in_order] == sorted(text.index(words) for words in in_order)
    assert "Chapter title" not in text
