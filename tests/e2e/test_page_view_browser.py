"""An auditor reads a cited quote on its page as printed: the PDF page drawn, the quote boxed where its
glyphs are, zoom, the next citation on another page, the text view one key away, the original at the page."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from reviewer.models import Review
from tests.pdf_contract import make_pdf_contract, not_found_pointing_at

pytestmark = pytest.mark.django_db(transaction=True)

# The shown position of each box against the JSON's fractions of the page image: within half a percent.
TOLERANCE = 0.005
PDF_VIEWER = "chrome-extension://mhjfbmdgcfjbbpaeojofohoefgiehjai/"  # Chromium's built-in PDF viewer

PLACES = """(figure) => {
  const img = figure.querySelector('img').getBoundingClientRect();
  return Array.from(figure.querySelectorAll('rect')).map(r => { const b = r.getBoundingClientRect();
    return { left: (b.left - img.left) / img.width, top: (b.top - img.top) / img.height,
             right: (b.right - img.left) / img.width, bottom: (b.bottom - img.top) / img.height,
             id: r.getAttribute('data-citation-id') }; });
}"""


@pytest.fixture
def auditor(engagement, make_member):
    return make_member(engagement, "auditor", username="alice")


@pytest.fixture
def pdf_contract(engagement):
    return make_pdf_contract(engagement)


def wait_for_page(s, number: int):
    figure = s.page.locator(f'figure[data-page-image="{number}"]')
    figure.locator("rect").first.wait_for(state="attached")
    s.page.wait_for_function(
        '(n) => { const i = document.querySelector(`figure[data-page-image="${n}"] img`);'
        " return i && i.complete && i.naturalWidth > 0; }",
        arg=number,
    )
    return figure


def boxes_json(s, citation) -> dict:
    response = s.page.request.get(
        reverse("citation-boxes", args=[citation.extraction.document_id, citation.pk])
    )
    assert response.ok
    return response.json()


def assert_boxes_over_the_quote(s, figure, citation):
    data = boxes_json(s, citation)
    number = int(figure.get_attribute("data-page-image"))
    expected = [b for b in data["boxes"] if b["page"] == number]
    shown = [p for p in figure.evaluate(PLACES) if p["id"] == str(citation.pk)]
    assert expected and len(shown) == len(expected)
    for place, box in zip(shown, expected):
        for side in ("left", "top", "right", "bottom"):
            assert abs(place[side] - box[side]) < TOLERANCE, (side, place, box)


def visible_in_viewer(s, locator) -> bool:
    return locator.evaluate(
        """(el) => { const r = el.getBoundingClientRect(), v = document.getElementById('viewer').getBoundingClientRect();
                     return r.top >= v.top && r.bottom <= v.bottom; }"""
    )


def assert_marked_in_the_text_view(s, kind: str):
    """The ``v`` key turns the viewer to the text, where the ``kind`` passage's mark is shown in view."""
    s.page.locator("#viewer").focus()
    s.page.keyboard.press("v")
    mark = s.page.locator(f"mark.{kind}").first
    assert mark.is_visible() and visible_in_viewer(s, mark)
    assert s.errors == []


def test_a_clause_shows_its_page_with_the_quote_boxed_zoom_and_next_citation(
    signed_in, auditor, pdf_contract
):
    s = signed_in(auditor)
    ex = pdf_contract.extractions["Cap On Liability"]
    first, second = pdf_contract.citations["Cap On Liability"]
    s.page.goto(reverse("document", args=[ex.document_id]))
    s.page.click(f'#clause-list [data-extraction-id="{ex.pk}"]')
    figure = wait_for_page(s, first.page)
    s.settle()
    assert (
        figure.is_visible() and not s.page.locator(f'.page[data-page="{first.page}"] .page-text').is_visible()
    )
    assert_boxes_over_the_quote(s, figure, first)
    assert visible_in_viewer(s, figure.locator("rect.current").first)  # scrolled to the first box
    s.shot("30-page-view-boxes")

    # zoom in: a wider image (drawn at a larger width), the boxes still on the quote
    before = figure.bounding_box()["width"]
    s.page.click("#zoom-in")
    s.page.wait_for_function("() => document.getElementById('zoom-level').textContent === '150%'")
    s.page.wait_for_function(
        "() => { const i = document.querySelector('figure[data-page-image] img');"
        " return /w(1200|2000)\\.png$/.test(i.getAttribute('src')) && i.complete && i.naturalWidth >= 1200; }"
    )
    assert figure.bounding_box()["width"] > 1.4 * before
    assert_boxes_over_the_quote(s, figure, first)
    s.shot("31-page-view-zoomed")
    s.page.keyboard.press("-")  # and back, from the keyboard
    s.page.wait_for_function("() => document.getElementById('zoom-level').textContent === '100%'")

    # the next citation is on the next page: its page, its box
    s.page.click('[data-nav="next-citation"]')
    figure = wait_for_page(s, second.page)
    assert second.page != first.page
    assert_boxes_over_the_quote(s, figure, second)
    assert s.page.url.endswith(reverse("citation", args=[ex.document_id, ex.pk, second.pk]))
    link = s.page.locator("#open-original")
    assert (
        link.get_attribute("href").endswith(f"#page={second.page}")
        and link.get_attribute("target") == "_blank"
    )
    assert link.text_content().strip() == f"Open the original at page {second.page}"
    with s.context.expect_page() as opened:  # a new tab, Chromium's own PDF viewer in it (not a download)
        link.click()
    viewer = opened.value
    viewer.wait_for_load_state()
    assert viewer.url.endswith(f"{reverse('document-original', args=[ex.document_id])}#page={second.page}")
    for _ in range(50):
        if any(f.url.startswith(PDF_VIEWER) for f in viewer.frames):
            break
        viewer.wait_for_timeout(100)
    assert any(f.url.startswith(PDF_VIEWER) for f in viewer.frames), [f.url for f in viewer.frames]
    viewer.close()

    # v: the text view, the quote marked; v again: the page
    s.page.locator("#viewer").focus()
    s.page.keyboard.press("v")
    mark = s.page.locator(f'mark[data-citation-id="{second.pk}"]')
    assert mark.is_visible() and not figure.is_visible()
    assert s.page.get_attribute("#view-text", "aria-pressed") == "true"
    s.page.keyboard.press("v")
    assert figure.is_visible() and not mark.is_visible()

    # the clause chosen again, zoomed: htmx swaps the page view in place and settles it without an
    # inline style, which the CSP would refuse (the fixture fails the test on any console error)
    s.page.click("#zoom-in")
    s.page.click(f'#clause-list [data-extraction-id="{ex.pk}"]')
    figure = wait_for_page(s, first.page)
    s.settle()
    assert "zoom-150" in (figure.get_attribute("class") or "")


def test_a_quote_across_a_page_break_is_boxed_on_both_pages(signed_in, auditor, pdf_contract):
    s = signed_in(auditor)
    ex = pdf_contract.extractions["Termination For Convenience"]
    (citation,) = pdf_contract.citations["Termination For Convenience"]
    s.page.goto(reverse("clause", args=[ex.document_id, ex.pk]))
    for number in (2, 3):
        assert_boxes_over_the_quote(s, wait_for_page(s, number), citation)
    s.shot("32-page-view-across-pages")


def test_a_page_that_cannot_be_drawn_shows_its_text_with_a_note(signed_in, auditor, engagement):
    contract = make_pdf_contract(engagement, title="Damaged original")
    Path(contract.document.file.path).write_bytes(b"%PDF-1.4 damaged")
    s = signed_in(auditor)
    ex = contract.extractions["Governing Law"]
    (citation,) = contract.citations["Governing Law"]
    s.page.goto(reverse("clause", args=[ex.document_id, ex.pk]))
    note = s.page.locator(".image-note")
    note.wait_for()
    s.page.wait_for_function(
        "() => /cannot be opened/.test(document.querySelector('.image-note').textContent)"
    )
    assert f"The image of page {citation.page} could not be drawn" in note.text_content()
    assert s.page.locator(f'mark[data-citation-id="{citation.pk}"]').is_visible()
    s.shot("33-page-view-fallback")


def test_a_docx_clause_is_boxed_on_libreoffices_page_in_the_browser(signed_in, auditor, engagement):
    """A DOCX original: the page shown is the one LibreOffice lays the quote out on, the box over it where
    the JSON says, and the note names LibreOffice."""
    from tests.integration.test_office_pages import CAP, LAW, contract_docx, make_office_contract

    doc, citations = make_office_contract(
        engagement, contract_docx(), "docx", {"Cap On Liability": CAP, "Governing Law": LAW}
    )
    citation = citations["Cap On Liability"]
    s = signed_in(auditor)
    s.page.goto(reverse("document", args=[doc.pk]))
    s.page.click(f'#clause-list [data-extraction-id="{citation.extraction_id}"]')
    figure = wait_for_page(s, citation.page)
    s.settle()
    assert_boxes_over_the_quote(s, figure, citation)
    assert "LibreOffice" in s.page.locator("[data-office-note]").text_content()
    s.shot("34-page-view-docx")


def test_a_not_found_shows_its_closest_sentence_outlined_on_the_page_and_marked_in_the_text(
    signed_in, auditor, pdf_contract
):
    s = signed_in(auditor)
    ex = not_found_pointing_at(pdf_contract, "Termination For Convenience")
    s.page.goto(reverse("clause", args=[ex.document_id, ex.pk]))
    figure = wait_for_page(s, 2)
    s.settle()
    assert "judged closest, on page 2" in s.page.locator("#closest-note").inner_text()
    near = pdf_contract.citations["Termination For Convenience"][0]
    assert s.page.locator("#decision-corrected").input_value() == near.quote  # "e" starts from it
    outline = figure.locator("rect.closest").first
    assert visible_in_viewer(s, outline)  # scrolled to it, outlined (not filled as a citation is)
    assert outline.evaluate("(r) => getComputedStyle(r).fill") == "none"
    assert figure.locator("rect.current").count() == 0
    s.shot("33-not-found-closest-sentence")
    assert_marked_in_the_text_view(s, "closest")


def test_a_correction_made_from_the_closest_sentence_is_drawn_where_it_stands(
    signed_in, auditor, pdf_contract
):
    s = signed_in(auditor)
    ex = not_found_pointing_at(pdf_contract, "Termination For Convenience")
    clause = pdf_contract.citations["Termination For Convenience"][0]
    s.page.goto(reverse("clause", args=[ex.document_id, ex.pk]))
    wait_for_page(s, 2)
    s.settle()
    s.page.keyboard.press("e")  # the correction starts from the closest sentence: saved as it is
    s.page.keyboard.press("Control+Enter")
    s.page.wait_for_selector('[data-review-state="correct"]')
    s.page.wait_for_selector("#correction-note")
    saved = Review.objects.get(extraction=ex).corrected_text
    assert "\f" not in saved and saved.split() == clause.quote.split()  # a page break is a line end
    assert (
        f"stands on page 2, characters {clause.start}–{clause.end}"
        in s.page.locator("#correction-note").inner_text()
    )
    figure = wait_for_page(s, 2)
    s.settle()
    box = figure.locator("rect.correction").first
    assert visible_in_viewer(s, box) and figure.locator("rect.closest").count() == 0
    s.shot("35-correction-drawn")
    assert_marked_in_the_text_view(s, "correction")


def test_a_not_found_opened_on_its_closest_sentence_is_confirmed_with_a(signed_in, auditor, pdf_contract):
    s = signed_in(auditor)
    ex = not_found_pointing_at(pdf_contract, "Termination For Convenience")
    s.page.goto(reverse("clause", args=[ex.document_id, ex.pk]))
    wait_for_page(s, 2)
    s.settle()
    s.page.keyboard.press("a")  # the box holds the closest sentence, untouched: the not_found is accepted
    s.page.wait_for_selector('[data-review-state="accept"]')
    assert Review.objects.get(extraction=ex).decision == "accept"
    # an edit of that sentence is still never thrown away by an accept
    other = not_found_pointing_at(pdf_contract, "Governing Law", "Insurance")
    s.page.goto(reverse("clause", args=[other.document_id, other.pk]))
    s.settle()
    s.page.keyboard.press("e")
    s.page.keyboard.type(" (edited)")
    s.page.click('#decision-form button[data-action="accept"]')
    s.page.wait_for_selector("text=You edited the text")
    assert not Review.objects.filter(extraction=other).exists()
