"""Word documents and slide decks: estimated pages for DOCX, a slide per page, slide text that
looks like a marker, and PPTX automatic numbering written into the text.
"""

from __future__ import annotations

import io

from ingest.convert import convert_file
from ingest.pages import page_of
from tests.unit.convert_helpers import make_docx, make_pptx, write


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
    for _n, boxes in enumerate(texts, start=1):
        slide = deck.slides.add_slide(deck.slide_layouts[6])
        for k, text in enumerate(boxes):
            slide.shapes.add_textbox(Inches(1), Inches(1 + k), Inches(6), Inches(1)).text_frame.text = text
    buffer = io.BytesIO()
    deck.save(buffer)
    converted = convert_file(write(tmp_path, "deck.pptx", buffer.getvalue()))
    assert [p.number for p in converted.pages] == [1, 2, 3]
    for n, boxes in enumerate(texts, start=1):
        page = converted.text[converted.pages[n - 1].char_start : converted.pages[n - 1].char_end]
        for text in boxes:
            assert text in page, (n, text, page)


def numbered_deck(paragraphs: list[tuple[str, int, str | None, int | None]], list_style: str = "") -> bytes:
    """One slide, one text box of ``paragraphs`` as (text, level, buAutoNum type or "none", startAt)."""
    from lxml import etree
    from pptx import Presentation
    from pptx.util import Inches

    a = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
    deck = Presentation()
    frame = (
        deck.slides.add_slide(deck.slide_layouts[6])
        .shapes.add_textbox(Inches(1), Inches(1), Inches(8), Inches(5))
        .text_frame
    )
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
    deck = numbered_deck(
        [
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
        ]
    )
    text = convert_file(write(tmp_path, "deck.pptx", deck)).text
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines == [
        "1. Definitions",
        "(a) Fees of $247.83",
        "(b) Account cust_4711",
        "iv. Late fee",
        "2. Payment",
        "(a) Restarted after a shallower paragraph",
        "A. Scheme changes",
        "3. Termination",
        "Not numbered",
        "7) After a plain paragraph",
        "I. Roman upper",
        "aa. Alpha period",
        "(1) Both",
    ], text


def test_pptx_numbering_from_the_text_boxs_list_style(tmp_path):
    style = '<a:lvl1pPr><a:buAutoNum type="arabicParenR"/></a:lvl1pPr>'
    deck = numbered_deck(
        [
            ("Notice in writing", 0, None, None),
            ("Cure within 30 days", 0, None, None),
            ("Plain line", 0, "none", None),
        ],
        list_style=style,
    )
    lines = [
        line for line in convert_file(write(tmp_path, "deck.pptx", deck)).text.splitlines() if line.strip()
    ]
    assert lines == ["1) Notice in writing", "2) Cure within 30 days", "Plain line"]
