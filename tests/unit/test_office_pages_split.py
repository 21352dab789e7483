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


def test_a_page_our_text_lacks_joins_the_page_before_it():
    pages = [FEES, "Exhibit A: signature block as an image, scanned", TERM + "\n" + LAW]
    split = split_pages(OURS, page_starts(layer(pages), fold(OURS)))
    assert len(split) == 2 and split[1].startswith("## 2. Term")
