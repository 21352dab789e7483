"""LibreOffice's pages found in our text (ingest.office_boxes.page_starts, split_pages): pure, over a layer
made by hand, so a header our converter drops, a page our text lacks and a heading's marks are each seen."""

from __future__ import annotations

from ingest.office_boxes import Layer, fold, page_starts, split_pages

OURS = (
    "# 1. Fees\n\nThe Customer pays the monthly fee of $247.83 within thirty days.\n\n"
    "## 2. Term\n\nThis Agreement runs for three years from the Effective Date.\n\n"
    "## 3. Governing Law\n\nThe laws of the State of Delaware govern this Agreement.\n"
)


# LibreOffice's text of each section's page: no Markdown marks, its own line breaks
FEES = "1. Fees\nThe Customer pays the monthly fee of $247.83 within thirty days."
TERM = "2. Term\nThis Agreement runs for three years from the Effective Date."
LAW = "3. Governing Law\nThe laws of the State of Delaware govern this Agreement."


def layer(pages: list[str]) -> Layer:
    """The layer LibreOffice's PDF would give for these page texts."""
    texts, starts, raw, total = [], [], [], 0
    for page in pages:
        folded = fold(page)
        starts.append(total)
        texts.append(folded.text)
        raw.extend(folded.origin)
        total += len(folded.text)
    return Layer("".join(texts), starts, raw, list(pages))


def test_each_page_starts_where_its_words_do_and_keeps_its_heading_marks():
    pages = split_pages(OURS, page_starts(layer([FEES, TERM, LAW]), fold(OURS)))
    assert "".join(pages) == OURS  # nothing lost or added
    assert [p.split("\n")[0] for p in pages] == ["# 1. Fees", "## 2. Term", "## 3. Governing Law"]


def test_a_running_header_our_text_lacks_is_looked_past():
    header = "CONFIDENTIAL DRAFT FOR DISCUSSION\n"
    found = page_starts(layer([header + FEES, header + TERM + "\n" + LAW]), fold(OURS))
    assert len(found) == 1 and OURS[found[0] :].startswith("2. Term")


def test_a_page_our_text_lacks_stays_an_empty_page_and_the_next_keep_their_numbers():
    pages = [FEES, "Exhibit A: signature block as an image, scanned", TERM, LAW]
    split = split_pages(OURS, page_starts(layer(pages), fold(OURS)))
    assert "".join(split) == OURS and len(split) == 4
    assert split[1] == "" and split[2].startswith("## 2. Term") and split[3].startswith("## 3. Governing")


def test_a_layout_whose_pages_are_not_in_the_text_leaves_the_pages_estimated_and_says_so(tmp_path):
    """LibreOffice's text of another document (as a font without a text mapping would give): no page of it is
    found, so the pages stay estimated rather than numbered wrongly."""
    from ingest.convert import convert_file
    from tests.unit.convert_helpers import make_docx, make_pdf, write

    path = write(tmp_path, "contract.docx", make_docx(paragraphs=3))
    converted = convert_file(path, layout=lambda _data, _kind: make_pdf(pages=5))
    assert converted.pages_estimated
    assert "LibreOffice's pages were not found in the text" in " ".join(converted.warnings)
