"""Shared makers for the conversion tests (tests/unit/test_convert_*.py): documents built in the test with
fpdf2, python-docx, python-pptx, openpyxl and zipfile, and the checks every refusal meets.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from fpdf import FPDF

from ingest.convert import ConversionError, convert_file

CLAUSE = (
    "The Supplier shall indemnify and hold harmless the Buyer from and against any and all "
    "claims, losses and damages arising out of any breach of this Agreement. "
)


def make_pdf(pages: int = 5, table_page: int | None = 3, encrypt: bool = False) -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    if encrypt:
        pdf.set_encryption(owner_password="owner-secret", user_password="user-secret")
    for n in range(1, pages + 1):
        pdf.add_page()
        pdf.multi_cell(0, 6, f"Marker for page {n}. " + CLAUSE * 3)
        if n == table_page:
            with pdf.table() as table:
                for row in (
                    ("Item", "Quantity", "Price"),
                    ("Widget", "10", "$247.83"),
                    ("Gadget", "3", "$1,200.00"),
                ):
                    cells = table.row()
                    for value in row:
                        cells.cell(value)
            pdf.multi_cell(0, 6, f"After the table on page {n}.")
    return bytes(pdf.output())


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def expect(code: str, path: Path, **kwargs) -> ConversionError:
    with pytest.raises(ConversionError) as caught:
        convert_file(path, **kwargs)
    assert caught.value.code == code
    assert caught.value.message and caught.value.message[0].isupper() and caught.value.message.endswith(".")
    return caught.value


def make_docx(paragraphs: int = 3) -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Master Services Agreement", 1)
    for i in range(paragraphs):
        document.add_paragraph(f"Clause {i + 1}. " + CLAUSE)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def make_xlsx() -> bytes:
    import openpyxl

    workbook = openpyxl.Workbook()
    prices = workbook.active
    prices.title = "Prices"
    prices.append(["Item", "Price"])
    prices.append(["Widget", 247.83])
    terms = workbook.create_sheet("Terms")
    terms.append(["Clause", "Text"])
    terms.append([1, "Payment is due within 30 days."])
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def make_pptx() -> bytes:
    from pptx import Presentation

    deck = Presentation()
    for n in range(1, 4):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Slide title {n}"
        slide.placeholders[1].text = f"Body of slide {n}. Renewal is automatic."
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def make_deck(slides: int) -> bytes:
    """A PPTX of ``slides`` slides, each a title and a sentence, written part by part (python-pptx takes
    minutes to add thousands of slides): one slide made by python-pptx, its XML copied with its text changed.
    Two parts a slide (its XML and its relationships), as in a deck PowerPoint saves."""
    import re

    from pptx import Presentation

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "TITLE_HERE"
    slide.placeholders[1].text = "BODY_HERE"
    seed = io.BytesIO()
    deck.save(seed)
    source = zipfile.ZipFile(seed)
    slide_xml = source.read("ppt/slides/slide1.xml").decode()
    slide_rels = source.read("ppt/slides/_rels/slide1.xml.rels")
    numbers = range(1, slides + 1)
    ids = "".join(f'<p:sldId id="{256 + n}" r:id="rIdS{n}"/>' for n in numbers)
    presentation = re.sub(
        r"<p:sldIdLst>.*?</p:sldIdLst>",
        f"<p:sldIdLst>{ids}</p:sldIdLst>",
        source.read("ppt/presentation.xml").decode(),
        flags=re.S,
    )
    slide_type = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide"
    relationships = re.sub(
        r'<Relationship[^>]*relationships/slide"[^>]*/>',
        "",
        source.read("ppt/_rels/presentation.xml.rels").decode(),
    ).replace(
        "</Relationships>",
        "".join(
            f'<Relationship Id="rIdS{n}" Type="{slide_type}" Target="slides/slide{n}.xml"/>' for n in numbers
        )
        + "</Relationships>",
    )
    slide_content = "application/vnd.openxmlformats-officedocument.presentationml.slide+xml"
    types = re.sub(
        r'<Override PartName="/ppt/slides/slide1.xml"[^>]*/>', "", source.read("[Content_Types].xml").decode()
    ).replace(
        "</Types>",
        "".join(
            f'<Override PartName="/ppt/slides/slide{n}.xml" ContentType="{slide_content}"/>' for n in numbers
        )
        + "</Types>",
    )
    rewritten = {
        "ppt/presentation.xml": presentation.encode(),
        "ppt/_rels/presentation.xml.rels": relationships.encode(),
        "[Content_Types].xml": types.encode(),
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for info in source.infolist():
            if not info.filename.startswith("ppt/slides/"):
                archive.writestr(info.filename, rewritten.get(info.filename) or source.read(info.filename))
        for n in numbers:
            text = f"The Supplier shall meet service level {n} every month; service credits of {n}% apply."
            xml = slide_xml.replace("TITLE_HERE", f"Clause {n}: Service levels").replace("BODY_HERE", text)
            archive.writestr(f"ppt/slides/slide{n}.xml", xml)
            archive.writestr(f"ppt/slides/_rels/slide{n}.xml.rels", slide_rels)
    return out.getvalue()


def make_epub(
    body: str = "<h1>Lease Agreement</h1><p>The Tenant shall pay rent monthly.</p><script>alert(1)</script>",
    chapters: dict[str, bytes] | None = None,
) -> bytes:
    """An EPUB of one chapter holding ``body``, or of ``chapters`` (file name → bytes) read in
    the order given; the manifest lists them the other way round."""
    chapters = chapters or {"c1.xhtml": f"<html><body>{body}</body></html>".encode()}
    ids = {name: f"c{n}" for n, name in enumerate(chapters, start=1)}
    manifest = "".join(
        f'<item id="{ids[name]}" href="{name}" media-type="application/xhtml+xml"/>'
        for name in reversed(chapters)
    )
    spine = "".join(f'<itemref idref="{ids[name]}"/>' for name in chapters)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        archive.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Lease</dc:title></metadata>'
            f"<manifest>{manifest}</manifest><spine>{spine}</spine></package>",
        )
        for name, data in chapters.items():
            archive.writestr(f"OEBPS/{name}", data)
    return buffer.getvalue()
