"""A scanned contract through the real pipeline: ready with its OCR text, a value cited and verified on that
text, its boxes drawn from the OCR words, per-page progress and confidence stored and shown, a low-confidence
page flagged beside the clause cited from it, and a missing OCR language a clear per-document error."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from extraction.service import find_clause
from ingest.intake import intake_file
from ingest.models import Document, Page
from ingest.pipeline import _Reporter, run_pipeline
from tests.scan_pdf import CONTRACT_LINES, SECOND_PAGE_LINES, image_pdf, page_image, turned

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def scanned(engagement, tmp_path, images, name="scan.pdf") -> Document:
    path = tmp_path / name
    path.write_bytes(image_pdf(images))
    return intake_file(engagement, path, filename=name, enqueue=False).document


@pytest.fixture
def drawn():
    first, where = page_image(CONTRACT_LINES)
    second, _ = page_image(SECOND_PAGE_LINES)
    return first, second, where


def test_a_scanned_contract_becomes_ready_and_a_value_cited_from_it_verifies(
    engagement, tmp_path, make_member, client, drawn, monkeypatch
):
    first, second, where = drawn
    details: list[str] = []
    called = _Reporter.__call__

    def spy(self, percent, detail=None):  # what the documents table reads while the stage runs
        called(self, percent, detail)
        row = Document.objects.get(pk=self.document_id)
        if row.progress_detail:
            details.append(row.progress_detail)

    monkeypatch.setattr("ingest.pipeline.PROGRESS_INTERVAL_S", 0)
    monkeypatch.setattr(_Reporter, "__call__", spy)
    doc = scanned(engagement, tmp_path, [first, turned(second, 180)])
    assert run_pipeline(doc.pk)
    doc.refresh_from_db()

    assert doc.status == "ready" and doc.page_count == 2 and doc.progress_detail == ""
    assert "a monthly fee of $247.83," in doc.text and "Limitation of Liability" in doc.text
    assert {"OCR of 2 page(s) starting", "OCR page 1 of 2", "OCR page 2 of 2"} <= set(details)
    pages = list(Page.objects.filter(document=doc).order_by("number"))
    assert all(p.ocr_confidence is not None and p.ocr_confidence > 80 for p in pages)
    assert all(p.ocr_words and doc.text[p.char_start : p.char_end] for p in pages)
    start, end, *_ = pages[0].ocr_words[0]
    assert doc.text[pages[0].char_start + start : pages[0].char_start + end] == "SERVICES"
    convert = doc.stages.get(name="convert")
    assert "2 page(s) read by OCR" in convert.detail
    assert doc.chunks.exists() and not doc.chunks.filter(embedding__isnull=True).exists()

    # a value cited from the OCR text: found, verified (the quote is in the page's text), on page 1
    auditor = make_member(engagement, "auditor")
    ex = find_clause(doc, user=auditor, question="What monthly fee does the Customer pay?", engine="offline")
    assert ex.status == "found", ex.verification_errors
    cit = next(c for c in ex.citations.all() if "$247.83" in c.quote)
    assert doc.text[cit.start : cit.end] == cit.quote and cit.page == 1

    # its boxes come from the OCR words: where "$247.83" was drawn on the page
    client.force_login(auditor)
    boxes = client.get(reverse("citation-boxes", args=[doc.pk, cit.pk])).json()["boxes"]
    x0, y0, x1, y1 = where["$247.83,"]
    w, h = first.size
    assert any(
        b["page"] == 1
        and b["left"] <= x0 / w + 0.01
        and b["right"] >= x1 / w - 0.02
        and abs(b["top"] - y0 / h) < 0.01
        for b in boxes
    ), boxes

    # the reviewer sees the page was read by OCR; a low confidence is flagged beside the clause
    url = reverse("citation", args=[doc.pk, ex.pk, cit.pk])
    html = client.get(url, **HX).content.decode()
    assert re.search(r'class="chip ocr"[^>]*>OCR \d+%', html) and "data-ocr-low" not in html
    Page.objects.filter(document=doc, number=1).update(ocr_confidence=54.6)
    html = client.get(url, **HX).content.decode()
    assert 'data-ocr-low="1"' in html and "read by OCR with low confidence" in html and "OCR 55%" in html


def test_the_documents_table_shows_ocr_progress_in_words(engagement, make_member, client):
    doc = Document.objects.create(
        engagement=engagement,
        original_name="scan.pdf",
        sha256="a" * 64,
        title="Scanned lease",
        status="converting",
        progress=20,
        progress_detail="OCR page 37 of 212",
    )
    client.force_login(make_member(engagement, "auditor"))
    html = client.get(reverse("engagement-documents", args=[engagement.pk]), **HX).content.decode()
    assert "OCR page 37 of 212" in html and f'data-document-id="{doc.pk}"' in html


def test_a_scan_in_a_language_not_installed_fails_clearly_with_nothing_indexed(
    engagement, tmp_path, drawn, settings
):
    settings.OCR_LANGUAGES = "eng+xyz"
    doc = scanned(engagement, tmp_path, [drawn[0]])
    assert not run_pipeline(doc.pk)
    doc.refresh_from_db()
    assert (doc.status, doc.error_code) == ("failed", "ocr_language")
    assert "xyz" in doc.error and "OCR_LANGUAGES" in doc.error and doc.error.endswith(".")
    assert doc.text == "" and not doc.pages.exists() and not doc.chunks.exists() and doc.progress_detail == ""
    settings.OCR_LANGUAGES = "eng"  # the same file again, with the language there: it reads
    other = scanned(engagement, tmp_path, [drawn[0], drawn[1]], name="again.pdf")
    assert run_pipeline(other.pk)
