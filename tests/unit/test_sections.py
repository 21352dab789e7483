"""The section a quote is in is the heading before the quote's own start, not where its chunk started."""

from __future__ import annotations

import bisect

from ingest.chunker import chunk_document, section_starts
from ingest.pages import spans_from_text

TEXT = (
    "ARTICLE 5\nPAYMENT\n\n"
    "5.1 Fees. Customer shall pay the fees set out in the Order Form within thirty days.\n\n"
    "5.2 Taxes. Fees exclude taxes; Customer pays any sales tax on them.\n\n"
    "ARTICLE 6\nTERM\n\n"
    "6.1 Term. This Agreement runs for three years from the Effective Date.\n\n"
    "6.2 Renewal. It renews for one year at a time unless either party gives notice."
)


def section_at(text: str, offset: int) -> str:
    starts = section_starts(text)
    i = bisect.bisect_right(starts, (offset, "\uffff")) - 1
    return starts[i][1] if i >= 0 else ""


def test_a_quote_under_a_later_heading_than_its_chunk_start_names_its_own_section():
    chunks = chunk_document(TEXT, spans_from_text(TEXT), max_chars=2000)
    assert len(chunks) == 1 and chunks[0].section.startswith("ARTICLE 5")  # one chunk, started in Article 5
    quote = TEXT.index("It renews for one year")
    assert section_at(TEXT, quote).endswith("6.2 Renewal")
    assert "ARTICLE 6" in section_at(TEXT, quote)
    assert section_at(TEXT, TEXT.index("Fees exclude")).endswith("5.2 Taxes")
    assert section_at(TEXT, 0).startswith("ARTICLE 5")


def test_the_sections_read_are_the_chunkers_own():
    text = TEXT * 3
    chunks = chunk_document(text, spans_from_text(text), max_chars=300, overlap=0.0)
    for chunk in chunks:  # without overlap a chunk's new text begins at its start
        assert section_at(text, chunk.char_start) == chunk.section
