"""The page view of an office original (DOCX, XLSX) through the PDF LibreOffice lays out of it: the page
image at a citation is the LibreOffice page the quote is found on and its boxes lie over the quote's own
glyphs; a file LibreOffice cannot lay out shows the text with a note; scoped like a PDF's pages."""

from __future__ import annotations

import hashlib
import io
import re
from pathlib import Path

import docx
import openpyxl
import pypdfium2 as pdfium
import pytest
from django.conf import settings
from django.core.files.base import ContentFile
from django.urls import reverse
from PIL import Image

from engagements.models import Engagement
from ingest import office_pdf, page_view
from tests.unit.convert_helpers import make_epub, make_pptx

pytestmark = pytest.mark.django_db  # LibreOffice is installed by make (make office), never skipped for
HX = {"HTTP_HX_REQUEST": "true"}
FILLER = (
    "The parties have negotiated this Agreement at arm's length and each has had the benefit of counsel "
    "of its own choosing in doing so. "
)
CAP = (
    "Each party's aggregate liability arising out of or relating to this Agreement shall not exceed "
    "$247,830.00 in any contract year"
)
LAW = "governed by the laws of the State of Delaware"


def contract_docx() -> bytes:
    """A DOCX of some five LibreOffice pages, the cap clause on a later one, its repeated filler around."""
    document = docx.Document()
    document.add_heading("MASTER SERVICES AGREEMENT", 0)
    for n in range(1, 13):
        document.add_heading(f"{n}. Section {n}", 1)
        document.add_paragraph(FILLER * 5)
        if n == 9:
            document.add_paragraph(f"9.2 Cap on Liability. {CAP}. " + FILLER)
    document.add_paragraph(
        f"18. Governing Law. This Agreement is {LAW}, without regard to its conflict rules."
    )
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def fees_xlsx() -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Fees"
    sheet.append(["Service", "Monthly fee", "Notes"])
    for n in range(1, 40):
        sheet.append([f"Service line {n}", n * 100, f"Billed monthly in arrears, line {n}"])
    sheet.append(["Termination fee", 98765, "Payable within thirty days of notice"])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def make_office_contract(engagement, data: bytes, kind: str, quotes: dict[str, str], title="Office MSA"):
    """A reviewable document of ``kind`` converted by the real converter, each quote cited where it is."""
    from extraction.models import Citation, Extraction, ExtractionRun
    from ingest.convert import convert_file
    from ingest.models import Document
    from ingest.pages import page_of
    from tests.factories import ensure_clause_types
    from tests.pdf_contract import save_pages_and_chunks

    source = Path(settings.MEDIA_ROOT) / f"source-{hashlib.sha256(data).hexdigest()[:8]}.{kind}"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_bytes(data)
    converted = convert_file(source)
    text, pages = converted.text, converted.pages
    document = Document(
        engagement=engagement,
        original_name=f"{title}.{kind}",
        sha256=hashlib.sha256(data).hexdigest(),
        size_bytes=len(data),
        title=title,
        doc_type="MSA",
        kind=kind,
        status="ready",
        progress=100,
        text=text,
        page_count=len(pages),
        pages_estimated=converted.pages_estimated,
    )
    document.file.save(f"{title}.{kind}", ContentFile(data), save=False)
    document.save()
    chunks = save_pages_and_chunks(document, text, pages)
    types = ensure_clause_types(list(quotes))
    run = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
    citations = {}
    for name, words in quotes.items():
        found = re.search(r"[\s|*]+".join(re.escape(w) for w in words.split()), text)
        assert found, words
        start, end = found.span()
        chunk = next(c for c in chunks if c.char_start <= start < c.char_end)
        extraction = Extraction.objects.create(
            run=run,
            document=document,
            clause_type=types[name],
            status="found",
            engine="offline",
            model="offline-bm25",
            clause_text=words,
            dedupe_key=chunk.chunk_id,
        )
        citations[name] = Citation.objects.create(
            extraction=extraction,
            chunk=chunk,
            ordinal=0,
            page=page_of(start, pages),
            start=start,
            end=end,
            quote=text[start:end],
        )
    return document, citations


@pytest.fixture
def auditor(engagement, make_member):
    return make_member(engagement, "auditor")


@pytest.fixture
def docx_contract(engagement):
    return make_office_contract(
        engagement, contract_docx(), "docx", {"Cap On Liability": CAP, "Governing Law": LAW}
    )


def boxes_url(citation):
    return reverse("citation-boxes", args=[citation.extraction.document_id, citation.pk])


def citation_image_url(citation, number=None, width=800):
    doc_id = citation.extraction.document_id
    return reverse("citation-page-image", args=[doc_id, citation.pk, number or citation.page, width])


def folded(text: str) -> str:
    return re.sub(r"\W+", "", text).lower()


def test_a_docx_clause_shows_libreoffices_page_with_the_boxes_over_the_quotes_glyphs(
    client, auditor, docx_contract
):
    doc, citations = docx_contract
    citation = citations["Cap On Liability"]
    client.force_login(auditor)
    data = client.get(boxes_url(citation)).json()
    assert data["laid_out_by"] == "LibreOffice"
    [frame] = data["pages"]
    assert frame["number"] == citation.page and frame["located"] and frame["pdf_pages"] >= 4
    assert data["boxes"] and all(b["page"] == citation.page for b in data["boxes"])
    # the independent check: what pdfium reads inside the boxes on LibreOffice's page is the quote
    pdf = pdfium.PdfDocument(str(page_view.office_pdf_path(doc)))
    textpage = pdf[frame["pdf_page"] - 1].get_textpage()
    inside = " ".join(textpage.get_text_bounded(b["x0"], b["y0"], b["x1"], b["y1"]) for b in data["boxes"])
    assert folded(inside).startswith(folded(CAP)), inside
    for b in data["boxes"]:
        assert 0 <= b["left"] < b["right"] <= 1 and 0 <= b["top"] < b["bottom"] <= 1
    # the image at the citation is that LibreOffice page, drawn at the width asked and kept
    response = client.get(citation_image_url(citation))
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    image = Image.open(io.BytesIO(b"".join(response.streaming_content)))
    assert image.width == 800 and image.height > 1000
    kept = Path(settings.MEDIA_ROOT) / "var" / "page-images" / str(doc.pk)
    assert list(kept.glob(f"*-lo*-p{frame['pdf_page']}-w800.png"))
    again = client.get(citation_image_url(citation), HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304
    # the PDF is laid out once and kept beside the images
    assert len(list((Path(settings.MEDIA_ROOT) / "var" / "office-pdfs" / str(doc.pk)).glob("*.pdf"))) == 1
    # the review page draws it at the citation, with the boxes of the quote in hand and LibreOffice's note
    ex = citation.extraction
    html = client.get(reverse("clause", args=[doc.pk, ex.pk]), **HX).content.decode()
    assert citation_image_url(citation) in html and f'data-boxes="{boxes_url(citation)} "' in html
    assert "data-office-note" in html and "Open as laid out by LibreOffice" in html
    assert "<mark" in html  # the text view stays
    original = client.get(reverse("document-original", args=[doc.pk]))
    assert original["Content-Type"] == "application/pdf" and original["Content-Disposition"].startswith(
        "inline"
    )
    # a page read through (no citation): the LibreOffice page its text starts on
    page = client.get(reverse("page-image", args=[doc.pk, 1, 800]))
    assert page.status_code == 200


DAMAGES = (
    "For each day on which dispatch falls below ninety-five percent (95%), Supplier shall pay Customer, as "
    "liquidated damages and not as a penalty, two thousand five hundred dollars ($2,500), up to $75,000 in "
    "any calendar month."
)


def test_a_quotes_marks_are_boxed_with_its_words_one_box_a_line(client, auditor, engagement):
    document = docx.Document()
    document.add_heading("7. Service Levels", 1)
    document.add_paragraph("Supplier shall meet the service levels in Schedule B.")
    document.add_paragraph(DAMAGES)
    out = io.BytesIO()
    document.save(out)
    doc, citations = make_office_contract(engagement, out.getvalue(), "docx", {"Liquidated Damages": DAMAGES})
    client.force_login(auditor)
    data = client.get(boxes_url(citations["Liquidated Damages"])).json()
    [frame] = data["pages"]
    pdf = pdfium.PdfDocument(str(page_view.office_pdf_path(doc)))
    textpage = pdf[frame["pdf_page"] - 1].get_textpage()
    inside = [textpage.get_text_bounded(b["x0"], b["y0"], b["x1"], b["y1"]) for b in data["boxes"]]
    # "(95%)," and "($2,500)" do not split a line's box; the quote's first "(" and last "." are in one
    assert " ".join(" ".join(inside).split()) == DAMAGES, inside
    assert len({round(b["y0"]) for b in data["boxes"]}) == len(data["boxes"])


def test_an_xlsx_cell_is_boxed_on_libreoffices_sheet_page(client, auditor, engagement):
    doc, citations = make_office_contract(
        engagement, fees_xlsx(), "xlsx", {"Termination": "Payable within thirty days of notice"}, "Fees"
    )
    citation = citations["Termination"]
    client.force_login(auditor)
    data = client.get(boxes_url(citation)).json()
    assert data["pages"][0]["located"] and data["boxes"], data
    pdf = pdfium.PdfDocument(str(page_view.office_pdf_path(doc)))
    textpage = pdf[data["pages"][0]["pdf_page"] - 1].get_textpage()
    inside = " ".join(textpage.get_text_bounded(b["x0"], b["y0"], b["x1"], b["y1"]) for b in data["boxes"])
    assert folded(inside) == folded("Payable within thirty days of notice")
    assert client.get(citation_image_url(citation)).status_code == 200


def order_form_xlsx() -> bytes:
    """An order form as people type one: values wider than the default column, each beside a filled cell."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Order Form"
    sheet.append(["Item", "Reference", "Quantity", "Unit price", "Total"])
    sheet.append(["Route Planner subscription", "ord_88213", 1, "$184,500.00", "$184,500.00"])
    sheet.append(["Onboarding services", "ord_88214", 40, "$225.00", "$9,000.00"])
    sheet.append(["Premium support", "ord_88215", 1, "$12,750.00", "$12,750.00"])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_an_xlsx_row_prints_whole_and_is_boxed_whole(client, auditor, engagement):
    row = "Onboarding services ord_88214 40 $225.00 $9,000.00"
    doc, citations = make_office_contract(engagement, order_form_xlsx(), "xlsx", {"Payment": row}, "Order")
    client.force_login(auditor)
    data = client.get(boxes_url(citations["Payment"])).json()
    assert data["pages"][0]["located"] and data["boxes"], data
    pdf = pdfium.PdfDocument(str(page_view.office_pdf_path(doc)))
    textpage = pdf[data["pages"][0]["pdf_page"] - 1].get_textpage()
    inside = " ".join(textpage.get_text_bounded(b["x0"], b["y0"], b["x1"], b["y1"]) for b in data["boxes"])
    assert folded(inside) == folded(row)
    # LibreOffice cuts a value off at its filled neighbour ("$184,500.("): the sheet prints it whole
    printed = textpage.get_text_range()
    assert "Route Planner subscription" in printed and printed.count("$184,500.00") == 2


def test_boxes_kept_of_an_office_page_are_made_again_when_its_layout_changes(engagement, monkeypatch):
    row = "Premium support ord_88215 1 $12,750.00 $12,750.00"
    doc, citations = make_office_contract(engagement, order_form_xlsx(), "xlsx", {"Payment": row}, "Order")
    span = (citations["Payment"].start, citations["Payment"].end)
    first = page_view.span_boxes_json(doc, *span)
    assert first["pages"][0]["located"]
    made = []
    monkeypatch.setattr(page_view, "_office_span", lambda d, a, b: made.append((a, b)) or first)
    page_view.span_boxes_json(doc, *span)
    assert made == []  # kept
    monkeypatch.setattr(office_pdf, "CONVERT_VERSION", office_pdf.CONVERT_VERSION + 1)
    page_view.span_boxes_json(doc, *span)
    assert made == [span]  # boxes of the old layout are not served over the new one


def test_a_file_libreoffice_cannot_lay_out_shows_the_text_with_a_note(client, auditor, docx_contract):
    doc, citations = docx_contract
    citation = citations["Governing Law"]
    Path(doc.file.path).write_bytes(b"PK\x03\x04 not a document LibreOffice can open" * 10)
    client.force_login(auditor)
    response = client.get(citation_image_url(citation))
    assert response.status_code == 422 and "LibreOffice" in response.content.decode()
    assert response["Cache-Control"] == "private, no-store"
    boxes = client.get(boxes_url(citation))
    assert boxes.status_code == 422 and "LibreOffice" in boxes.json()["error"]
    # the failure is kept: asked again, LibreOffice does not run again
    failed = list((Path(settings.MEDIA_ROOT) / "var" / "office-pdfs" / str(doc.pk)).glob("*.failed"))
    assert len(failed) == 1
    assert client.get(reverse("page-image", args=[doc.pk, 1, 800])).status_code == 422
    # the review page still shows the quote in the text (the viewer shows it when the image fails)
    html = client.get(reverse("clause", args=[doc.pk, citation.extraction.pk]), **HX).content.decode()
    assert "<mark" in html and 'class="image-note small"' in html


def test_without_libreoffice_the_pages_stay_estimated_text(client, auditor, docx_contract, monkeypatch):
    doc, citations = docx_contract
    monkeypatch.setattr(office_pdf, "soffice", lambda: None)
    client.force_login(auditor)
    assert client.get(citation_image_url(citations["Governing Law"])).status_code == 404
    assert client.get(boxes_url(citations["Governing Law"])).status_code == 404
    html = client.get(reverse("clause", args=[doc.pk, citations["Governing Law"].extraction.pk]), **HX)
    text = html.content.decode()
    assert "data-page-image" not in text and "estimated page" in text


def test_a_conversion_out_of_time_is_killed_and_says_so(tmp_path):
    with pytest.raises(office_pdf.OfficeConversionError, match="within"):
        office_pdf.convert_to_pdf(contract_docx(), "docx", tmp_path / "profiles", timeout=0.05)


def test_another_engagements_office_pages_are_404(client, make_member, docx_contract):
    doc, citations = docx_contract
    citation = citations["Cap On Liability"]
    outsider = make_member(Engagement.objects.create(name="Globex audit", client="Globex"), "admin")
    client.force_login(outsider)
    for url in (
        reverse("page-image", args=[doc.pk, 1, 800]),
        citation_image_url(citation),
        boxes_url(citation),
        reverse("document-original", args=[doc.pk]),
    ):
        assert client.get(url).status_code == 404, url
    assert not (Path(settings.MEDIA_ROOT) / "var" / "office-pdfs" / str(doc.pk)).exists()  # nothing laid out


def breaks_docx(pages: int = 5) -> bytes:
    """A DOCX of ``pages`` short sections, a hard page break after each but the last."""
    document = docx.Document()
    for n in range(1, pages + 1):
        document.add_heading(f"{n}. Section {n}", 1)
        document.add_paragraph(f"Clause {n} of the agreement binds both parties. " * 4)
        if n < pages:
            document.add_page_break()
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def ingested(engagement, data: bytes, name: str):
    from ingest.intake import intake_file
    from ingest.models import Document
    from ingest.pipeline import run_pipeline

    source = Path(settings.MEDIA_ROOT) / f"upload-{hashlib.sha256(data).hexdigest()[:8]}-{name}"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_bytes(data)
    document = intake_file(engagement, source, filename=name, enqueue=False).document
    assert run_pipeline(document.pk)
    return Document.objects.get(pk=document.pk)


def test_a_docx_with_four_page_breaks_has_libreoffices_five_pages(client, auditor, engagement):
    """Pages are where LibreOffice puts them, not estimated from length: the documents table says 5, each
    page's text is that page's section, and a quote on page 4 is boxed on LibreOffice's page 4."""
    doc = ingested(engagement, breaks_docx(), "breaks.docx")
    assert doc.page_count == 5 and not doc.pages_estimated, doc.stages.get(name="convert").detail
    pages = list(doc.pages.order_by("number"))
    assert [doc.text[p.char_start : p.char_end].lstrip("# ").split(".")[0] for p in pages] == list("12345")
    client.force_login(auditor)
    listing = client.get(reverse("engagement", args=[engagement.pk])).content.decode()
    assert doc.title in listing and "est.</abbr>" not in listing
    start = doc.text.index("Clause 4 of the agreement")
    assert doc.pages.get(char_start__lte=start, char_end__gt=start).number == 4
    data = page_view.span_boxes_json(doc, start, start + 40)
    [frame] = data["pages"]
    assert frame["number"] == 4 and frame["pdf_page"] == 4 and frame["located"] and data["boxes"]


def test_without_libreoffice_a_docx_keeps_estimated_pages_and_says_why(engagement, monkeypatch):
    monkeypatch.setattr(office_pdf, "soffice", lambda: None)
    doc = ingested(engagement, breaks_docx(), "no-lo.docx")
    assert doc.pages_estimated and doc.page_count == 1
    convert = doc.stages.get(name="convert")
    assert "LibreOffice is not installed here" in convert.detail


def html_contract() -> bytes:
    body = "".join(f"<h2>{n}. Section {n}</h2><p>{FILLER * 4}</p>" for n in range(1, 10))
    return (
        f"<html><body><h1>Services Agreement</h1>{body}<p>This Agreement is {LAW}.</p></body></html>".encode()
    )


def epub_contract() -> bytes:
    chapters = {
        f"c{n}.xhtml": f"<html><body><h2>Chapter {n}</h2><p>{FILLER * 4}</p></body></html>".encode()
        for n in range(1, 4)
    }
    chapters["c4.xhtml"] = f"<html><body><p>This Agreement is {LAW}.</p></body></html>".encode()
    return make_epub(chapters=chapters)


@pytest.mark.parametrize(
    ("kind", "make", "quote"),
    [
        ("pptx", make_pptx, "Body of slide 2. Renewal is automatic."),
        ("html", html_contract, LAW),
        ("epub", epub_contract, LAW),
    ],
)
def test_pptx_html_and_epub_quotes_are_boxed_on_libreoffices_pages(
    client, auditor, engagement, kind, make, quote
):
    doc, citations = make_office_contract(
        engagement, make(), kind, {"Governing Law": quote}, f"Office {kind}"
    )
    citation = citations["Governing Law"]
    client.force_login(auditor)
    data = client.get(boxes_url(citation)).json()
    assert data["laid_out_by"] == "LibreOffice" and data["boxes"], data
    frame = data["pages"][0]
    assert frame["located"]
    pdf = pdfium.PdfDocument(str(page_view.office_pdf_path(doc)))
    textpage = pdf[frame["pdf_page"] - 1].get_textpage()
    inside = " ".join(textpage.get_text_bounded(b["x0"], b["y0"], b["x1"], b["y1"]) for b in data["boxes"])
    assert folded(inside) == folded(quote), inside
    assert client.get(citation_image_url(citation)).status_code == 200


def test_an_html_pages_title_is_laid_out_on_its_first_page(engagement):
    title = "WAREHOUSE LEASE"
    page = (
        f"<html><head><title>Warehouse Lease</title></head><body><h1>{title}</h1>"
        "<p>This Lease is dated 1 July 2025 between Norrland Property AB and Tidewater Cold Storage Ltd.</p>"
        "</body></html>"
    ).encode()
    doc = ingested(engagement, page, "lease.html")
    assert doc.page_count == 1 and not doc.pages_estimated, doc.stages.get(name="convert").detail
    start = doc.text.index(title)
    data = page_view.span_boxes_json(doc, start, start + len(title))
    [frame] = data["pages"]
    assert frame["pdf_page"] == 1 and frame["pdf_pages"] == 1 and frame["located"] and data["boxes"]
