"""The page view of a PDF original: page images, glyph boxes as JSON, the original inline; scoped like
every page, cached with ETags, bounded on disk, and a page that cannot be drawn says so."""

from __future__ import annotations

import io
import json
import re
from html import unescape as html_unescape
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from django.conf import settings
from django.urls import reverse
from PIL import Image

from engagements.models import Engagement
from ingest import pdf_render
from ingest.pdf_boxes import Box
from tests.pdf_contract import contract_pdf, make_pdf_contract, not_found_pointing_at

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def pdf_contract(engagement):
    return make_pdf_contract(engagement)


@pytest.fixture
def auditor(engagement, make_member):
    return make_member(engagement, "auditor")


def image_url(doc, number=1, width=800):
    return reverse("page-image", args=[doc.pk, number, width])


def boxes_url(citation):
    return reverse("citation-boxes", args=[citation.extraction.document_id, citation.pk])


def test_a_page_is_drawn_at_the_width_asked_kept_on_disk_and_revalidated_by_etag(
    client, auditor, pdf_contract
):
    client.force_login(auditor)
    doc = pdf_contract.document
    response = client.get(image_url(doc, 2, 800))
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert response["Cache-Control"] == "private, no-cache" and response["ETag"]
    image = Image.open(io.BytesIO(b"".join(response.streaming_content)))
    assert image.width == 800 and image.height > 1000  # A4, portrait
    kept = list((Path(settings.MEDIA_ROOT) / "var" / "page-images" / str(doc.pk)).glob("*-p2-w800.png"))
    assert len(kept) == 1
    again = client.get(image_url(doc, 2, 800), HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304 and again["ETag"] == response["ETag"]
    assert client.get(image_url(doc, 2, 2000)).status_code == 200  # zoomed
    for bad in (image_url(doc, 2, 640), image_url(doc, 0, 800), image_url(doc, doc.page_count + 1, 800)):
        assert client.get(bad).status_code == 404


def test_another_engagements_page_images_boxes_and_original_are_404(client, make_member, pdf_contract):
    other = Engagement.objects.create(name="Globex audit", client="Globex")
    outsider = make_member(other, "admin")
    client.force_login(outsider)
    doc, citation = pdf_contract.document, pdf_contract.citations["Governing Law"][0]
    for url in (image_url(doc), boxes_url(citation), reverse("document-original", args=[doc.pk])):
        assert client.get(url).status_code == 404, url
    mine = make_pdf_contract(other, title="Globex PDF", data=contract_pdf(labels=True))
    assert client.get(boxes_url(mine.citations["Governing Law"][0])).status_code == 200
    # a citation of another engagement's document, asked for under one's own document: still 404
    wrong = reverse("citation-boxes", args=[mine.document.pk, citation.pk])
    assert client.get(wrong).status_code == 404
    client.logout()
    assert client.get(image_url(doc)).status_code in (302, 401)


def test_the_boxes_json_holds_the_quotes_glyphs_in_points_and_fractions(client, auditor, pdf_contract):
    client.force_login(auditor)
    citation = pdf_contract.citations["Cap On Liability"][0]
    response = client.get(boxes_url(citation))
    assert response.status_code == 200 and response["Cache-Control"] == "private, no-cache"
    data = response.json()
    assert (data["citation"], data["start"], data["end"], data["page"]) == (
        citation.pk,
        citation.start,
        citation.end,
        2,
    )
    assert [p["number"] for p in data["pages"]] == [2] and data["pages"][0]["rotation"] == 0
    boxes = [Box(**b) for b in data["boxes"]]
    assert len(boxes) >= 2  # the quote runs over lines
    pdf = pdfium.PdfDocument(pdf_contract.data)
    textpage = pdf[1].get_textpage()
    read = " ".join(textpage.get_text_bounded(b.x0 + 1, b.y0 + 2, b.x1 - 1, b.y1 - 3) for b in boxes)
    assert re.sub(r"\s+", " ", read).strip() == re.sub(r"\s+", " ", citation.quote)
    again = client.get(boxes_url(citation), HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304


def test_a_quote_across_a_page_break_has_boxes_on_both_pages(client, auditor, pdf_contract):
    client.force_login(auditor)
    data = client.get(boxes_url(pdf_contract.citations["Termination For Convenience"][0])).json()
    assert [p["number"] for p in data["pages"]] == [2, 3]
    assert {b["page"] for b in data["boxes"]} == {2, 3}


def test_the_original_opens_inline_in_the_browsers_viewer(client, auditor, pdf_contract):
    client.force_login(auditor)
    response = client.get(reverse("document-original", args=[pdf_contract.document.pk]))
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"].startswith("inline")
    assert b"".join(response.streaming_content) == pdf_contract.data


def test_a_document_that_is_not_a_pdf_has_no_page_images(client, auditor, contract):
    client.force_login(auditor)
    doc = contract.document  # written straight into the database: no original file
    assert client.get(image_url(doc)).status_code == 404
    assert client.get(boxes_url(contract.citations["Governing Law"][0])).status_code == 404
    assert client.get(reverse("document-original", args=[doc.pk])).status_code == 404
    html = client.get(reverse("clause", args=[doc.pk, contract.extractions["Governing Law"].pk]), **HX)
    assert "data-page-image" not in html.content.decode()


def test_a_page_that_cannot_be_drawn_answers_with_the_reason(client, auditor, pdf_contract):
    client.force_login(auditor)
    doc = pdf_contract.document
    Path(doc.file.path).write_bytes(b"%PDF-1.4 this is not a PDF any more")
    response = client.get(image_url(doc, 1, 800))
    assert response.status_code == 422 and "cannot be opened" in response.content.decode()
    assert response["Cache-Control"] == "private, no-store"
    boxes = client.get(boxes_url(pdf_contract.citations["Governing Law"][0]))
    assert boxes.status_code == 422 and "cannot be opened" in boxes.json()["error"]


def test_a_huge_page_is_drawn_within_the_pixel_budget(client, auditor, engagement):
    contract = make_pdf_contract(engagement, title="Drawings", data=contract_pdf(huge_page=True))
    client.force_login(auditor)
    response = client.get(image_url(contract.document, 4, 2000))
    assert response.status_code == 200
    image = Image.open(io.BytesIO(b"".join(response.streaming_content)))
    assert image.width * image.height <= pdf_render.PIXEL_BUDGET and image.width <= 2000


def test_the_review_page_shows_the_page_the_tools_and_the_original_at_the_page(client, auditor, pdf_contract):
    client.force_login(auditor)
    ex, citation = pdf_contract.extractions["Governing Law"], pdf_contract.citations["Governing Law"][0]
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    assert f'data-page-image="{citation.page}"' in html
    assert reverse("page-image", args=[ex.document_id, citation.page, 800]) in html
    assert f'data-boxes="{boxes_url(citation)} "' in html and f'data-citation="{citation.pk}"' in html
    original = reverse("document-original", args=[ex.document_id])
    assert f'href="{original}#page={citation.page}"' in html
    assert f"Open the original at page {citation.page}" in html
    assert "<mark" in html  # the text view stays
    page = client.get(reverse("document-page", args=[ex.document_id, 1]), **HX).content.decode()
    assert 'data-page-image="1"' in page and "data-citation=" not in page  # a page read through: no quote


def test_the_citation_line_names_the_section_the_quote_is_in(client, auditor, pdf_contract):
    client.force_login(auditor)
    ex, citation = pdf_contract.extractions["Cap On Liability"], pdf_contract.citations["Cap On Liability"][0]
    assert "12.2" not in citation.chunk.section  # its chunk starts before 12.2 (at the article, or 12.1)
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    line = re.search(r'<p class="cite-meta[^>]*>(.*?)</p>', html, re.S).group(1)
    assert "12.2 Cap on Liability" in line, line


def test_the_printed_page_label_is_shown(client, auditor, engagement):
    contract = make_pdf_contract(engagement, title="Labelled", data=contract_pdf(labels=True))
    client.force_login(auditor)
    ex = contract.extractions["Cap On Liability"]
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    assert "(printed ii)" in html


def test_a_deleted_documents_page_images_leave_the_disk(
    client, auditor, pdf_contract, django_capture_on_commit_callbacks
):
    client.force_login(auditor)
    doc = pdf_contract.document
    assert client.get(image_url(doc, 1)).status_code == 200
    folder = Path(settings.MEDIA_ROOT) / "var" / "page-images" / str(doc.pk)
    assert any(folder.iterdir())
    from extraction.models import Citation, Extraction

    with django_capture_on_commit_callbacks(execute=True):
        Citation.objects.filter(extraction__document=doc).delete()
        Extraction.objects.filter(document=doc).delete()
        doc.delete()
    assert not folder.exists()


def test_the_image_folder_stays_under_its_bound(client, auditor, pdf_contract, settings):
    settings.PAGE_IMAGE_CACHE_BYTES = 400_000  # about two pages at 800 px
    client.force_login(auditor)
    doc = pdf_contract.document
    for number in (1, 2, 3, 1, 2, 3):
        for width in (800, 1200):
            assert client.get(image_url(doc, number, width)).status_code == 200
    root = Path(settings.MEDIA_ROOT) / "var" / "page-images"
    total = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    assert total <= 400_000 * 1.05


def test_with_the_cache_away_the_page_view_and_the_citation_line_still_work(
    client, auditor, pdf_contract, monkeypatch, caplog
):
    import redis
    from django.core.cache import cache

    def away(*args, **kwargs):
        raise redis.ConnectionError("Redis is down")

    monkeypatch.setattr(cache, "get", away)
    monkeypatch.setattr(cache, "set", away)
    client.force_login(auditor)
    ex, citation = pdf_contract.extractions["Cap On Liability"], pdf_contract.citations["Cap On Liability"][0]
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    assert "12.2 Cap on Liability" in html and "data-page-image" in html
    assert client.get(boxes_url(citation)).json()["boxes"]
    assert "cache unavailable, sections computed again" in caplog.text


def _marked_and_drawn(client, html, kind, ex, text, where) -> dict:
    """Asserts that the clause page ``html`` marks ``text`` once as a ``kind`` passage (not a citation) and
    points the page images at its boxes, which lie at ``where`` (start, end, page); the boxes' JSON."""
    assert html.count(f'id="{kind}-passage"') == 1
    marked = re.findall(rf'<mark class="{kind}" data-{kind}[^>]*>(.*?)</mark>', html, re.S)
    assert " ".join(html_unescape(" ".join(marked)).split()) == " ".join(text.split())
    boxes = reverse(f"{kind}-boxes", args=[ex.document_id, ex.pk])
    assert f'data-boxes="{boxes}"' in html and f'data-citation="{kind}"' in html
    data = client.get(boxes).json()
    assert (data["citation"], data["start"], data["end"], data["page"]) == (kind, *where)
    assert data["boxes"]
    return data


def test_a_not_found_shows_its_closest_sentence_marked_on_its_page_and_drawn_on_the_image(
    client, auditor, pdf_contract
):
    client.force_login(auditor)
    ex = not_found_pointing_at(pdf_contract, "Termination For Convenience")
    near = pdf_contract.citations["Termination For Convenience"][0]
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    assert "absent</strong> (93% sure)" in html and "judged closest, on page 2" in html
    data = _marked_and_drawn(client, html, "closest", ex, near.quote, (near.start, near.end, 2))
    assert data["boxes"][0]["page"] == 2  # the sentence runs on to page 3
    assert "data-citation-id" not in html.split('id="viewer"')[1].split("</section>")[0]  # no citation marked
    found = pdf_contract.extractions["Governing Law"]
    assert client.get(reverse("closest-boxes", args=[found.document_id, found.pk])).status_code == 404


def test_a_manager_reads_the_closest_sentence_without_being_told_to_correct(
    client, make_member, pdf_contract
):
    ex = not_found_pointing_at(pdf_contract, "Governing Law")
    client.force_login(make_member(pdf_contract.document.engagement, "manager", username="mona"))
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    assert 'id="closest-passage"' in html and "judged closest" in html and "correct the answer" not in html


def test_the_export_keeps_a_not_founds_closest_sentence_apart_from_its_citations(
    client, auditor, pdf_contract
):
    client.force_login(auditor)
    ex = not_found_pointing_at(pdf_contract, "Governing Law")
    near = pdf_contract.citations["Governing Law"][0]
    data = json.loads(client.get(reverse("document-export", args=[ex.document_id, "json"])).getvalue())
    (record,) = [r for r in data["clauses"] if r["extraction_id"] == ex.pk]
    assert record["citations"] == [] and record["confidence"] == 0.93
    assert record["closest"] == {"page": near.page, "span": [near.start, near.end], "quote": near.quote}


def test_a_not_found_without_a_closest_sentence_shows_no_page(client, auditor, contract):
    client.force_login(auditor)
    ex = contract.extractions["Non-Compete"]
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    assert "there is no citation to show" in html and "closest" not in html
    assert client.get(reverse("closest-boxes", args=[ex.document_id, ex.pk])).status_code == 404


def test_another_engagements_closest_boxes_are_404(client, make_member, pdf_contract):
    ex = not_found_pointing_at(pdf_contract, "Governing Law")
    other = Engagement.objects.create(name="Other audit", client="Other")
    client.force_login(make_member(other, "auditor", username="outsider"))
    assert client.get(reverse("closest-boxes", args=[ex.document_id, ex.pk])).status_code == 404


def _correct(client, ex, text, **shown):
    """The reviewer's correction, posted as the review page's htmx form posts it (``shown``: the citation
    or page being read)."""
    ex.refresh_from_db()
    return client.post(
        reverse("decide", args=[ex.document_id, ex.pk]),
        {
            "decision": "correct",
            "corrected_text": text,
            "seen_review": 0,
            "seen_version": ex.version,
            **shown,
        },
        **HX,
    )


def test_a_correction_is_marked_where_it_stands_on_its_page_and_drawn_on_the_image(
    client, auditor, pdf_contract
):
    client.force_login(auditor)
    ex = not_found_pointing_at(pdf_contract, "Termination For Convenience")
    clause = pdf_contract.citations["Termination For Convenience"][0]
    typed = " ".join(clause.quote.split())  # the reviewer's line breaks are not the page's
    assert typed != clause.quote and _correct(client, ex, typed).status_code == 200
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    assert f"The clause as corrected stands on page 2, characters {clause.start}–{clause.end}" in html
    data = _marked_and_drawn(client, html, "correction", ex, typed, (clause.start, clause.end, 2))
    assert data["boxes"][0]["page"] == 2 and 'id="closest-passage"' not in html


def test_a_found_clause_corrected_opens_on_its_correction_and_its_citations_stay(
    client, auditor, pdf_contract
):
    client.force_login(auditor)
    ex = pdf_contract.extractions["Cap On Liability"]
    cited = pdf_contract.citations["Cap On Liability"][0]
    other = pdf_contract.citations["Governing Law"][0]  # the reviewer points at another passage
    saved = _correct(client, ex, other.quote, citation=cited.pk).content.decode()  # read at the citation
    assert f"stands on page {other.page}" in saved and 'data-citation="correction"' in saved  # then shown
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    assert f"stands on page {other.page}" in html and 'data-citation="correction"' in html
    by_citation = reverse("citation", args=[ex.document_id, ex.pk, cited.pk])
    html = client.get(by_citation, **HX).content.decode()
    assert f'data-citation="{cited.pk}"' in html and f"Show the correction on page {other.page}" in html


def test_a_correction_not_in_the_document_as_typed_says_so(client, auditor, pdf_contract):
    client.force_login(auditor)
    ex = pdf_contract.extractions["Governing Law"]
    _correct(client, ex, "This Agreement is governed by the laws of Atlantis.")
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    assert "The corrected text is not in the document as typed" in html
    assert "correction-passage" not in html
    assert client.get(reverse("correction-boxes", args=[ex.document_id, ex.pk])).status_code == 404
