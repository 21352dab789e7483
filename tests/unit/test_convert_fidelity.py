"""Fidelity: the words and values of a contract come through as written, whatever the format
(superscripts, footnote marks, bold, italic and underline inside values, exact Office values).
"""

from __future__ import annotations

import io
import re
import zipfile

from ingest.convert import convert_file
from tests.unit.convert_helpers import make_epub, write


def test_a_superscript_ordinal_reads_as_written(tmp_path):
    html = b"<html><body><p>Effective on the 15<sup>th</sup> day of March, 2021; fee $5,000<sup>1</sup>.</p></body></html>"
    text = convert_file(write(tmp_path, "page.html", html)).text
    assert "the 15th day of March, 2021" in text and "$5,0001" not in text


def test_exact_values_survive_office_conversion_verbatim(tmp_path):
    from demo import make_workbook_xlsx

    path = tmp_path / "fees.xlsx"
    make_workbook_xlsx(path)
    converted = convert_file(path)
    assert "cust_4711" in converted.text and "cust\\_4711" not in converted.text
    assert "$247.83" in converted.text


def docx_bytes(document) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_a_superscript_never_joins_the_number_before_it(tmp_path):
    # markdownify wrote <sup>/<sub> with no mark at all: "$5,000" + footnote "1" became "$5,0001"
    import docx

    document = docx.Document()
    paragraph = document.add_paragraph("Annual fee of $5,000")
    paragraph.add_run("1").font.superscript = True
    paragraph.add_run(" payable; rate 10")
    paragraph.add_run("2").font.superscript = True
    paragraph.add_run(" per cent; H")
    paragraph.add_run("2").font.subscript = True
    paragraph.add_run("O.")
    html = b"<html><body><p>Annual fee of $5,000<sup>1</sup> payable; rate 10<sup>2</sup> per cent; H<sub>2</sub>O.</p></body></html>"
    texts = {
        "docx": convert_file(write(tmp_path, "fee.docx", docx_bytes(document))).text,
        "html": convert_file(write(tmp_path, "fee.html", html)).text,
        "epub": convert_file(write(tmp_path, "fee.epub", make_epub(html.decode()[12:-14]))).text,
    }
    for kind, text in texts.items():
        assert re.search(r"\$5,000(?!\d)", text), (kind, text)
        assert re.search(r"rate 10(?!\d)", text) and "H2O" not in text, (kind, text)
        assert "payable" in text and "per cent" in text


def docx_with_footnote(before: str, after: str, note: str) -> bytes:
    """A Word file of one paragraph, ``before`` + a footnote reference + ``after``, and the footnote ``note``
    (python-docx writes no footnotes: the part is added to its package by hand)."""
    import docx

    document = docx.Document()
    document.add_paragraph(before + "\ue001" + after)
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    sup = '<w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'
    footnotes = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:footnotes {w}>'
        '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
        f'<w:footnote w:id="1"><w:p><w:r>{sup}<w:footnoteRef/></w:r><w:r><w:t xml:space="preserve"> {note}'
        "</w:t></w:r></w:p></w:footnote></w:footnotes>"
    )
    edits = {
        "word/document.xml": (
            "\ue001",
            f'</w:t></w:r><w:r>{sup}<w:footnoteReference w:id="1"/></w:r><w:r><w:t xml:space="preserve">',
        ),
        "[Content_Types].xml": (
            "</Types>",
            '<Override PartName="/word/footnotes.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/></Types>',
        ),
        "word/_rels/document.xml.rels": (
            "</Relationships>",
            '<Relationship Id="rIdFootnotes" Type="http://schemas.'
            'openxmlformats.org/officeDocument/2006/relationships/footnotes" '
            'Target="footnotes.xml"/></Relationships>',
        ),
    }
    source, out = zipfile.ZipFile(io.BytesIO(docx_bytes(document))), io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename in edits:
                data = data.decode().replace(*edits[item.filename]).encode()
            package.writestr(item, data)
        package.writestr("word/footnotes.xml", footnotes)
    return out.getvalue()


def test_a_footnote_reference_reads_as_its_mark_not_as_a_link(tmp_path):
    # it was stored "per month.^^[[1]](#footnote-1)^^ Notices", the note "… 20%. [↑](#footnote-ref-1)"
    word = docx_with_footnote(
        "The Licensee shall pay a fee of $5,000 per month.",
        " Notices go to cust_4711.",
        "Fees exclude VAT of 20%.",
    )
    html = (
        b'<html><body><p>A fee of $5,000 per month.<sup><a href="#fn1" id="ref1">[1]</a></sup> Notices go to '
        b'cust_4711. See <a href="#schedule-b">Schedule B</a>.</p><ol><li id="fn1">Fees exclude VAT of 20%.</li>'
        b"</ol></body></html>"
    )
    texts = {
        "docx": convert_file(write(tmp_path, "fee.docx", word)).text,
        "html": convert_file(write(tmp_path, "fee.html", html)).text,
    }
    for kind, text in texts.items():
        assert "$5,000 per month.^1^ Notices go to cust_4711." in text, (kind, text)
        assert "Fees exclude VAT of 20%." in text and "footnote" not in text and "↑" not in text, (kind, text)
    assert "[Schedule B](#schedule-b)" in texts["html"]  # a link that is no footnote mark stays as written
    markdown = "A fee.^[[1]](#fn1)^\n\n[1]: the note\n"  # a Markdown file's own text is its author's
    assert convert_file(write(tmp_path, "fee.md", markdown.encode())).text.startswith("A fee.^[[1]](#fn1)^")


def test_bold_italic_and_underline_leave_no_marks_inside_values_and_defined_terms(tmp_path):
    # a value or defined term formatted in part was stored as "$<u>247</u>.83", "**cust**_4711",
    # "“**Effective Date**” means": a reviewer's or Claude's plain quote of it could not be found
    import docx

    document = docx.Document()
    document.add_heading("Fees", 1)
    paragraph = document.add_paragraph("The fee is $")
    paragraph.add_run("247").underline = True
    paragraph.add_run(".83 per month for account ")
    paragraph.add_run("cust").bold = True
    paragraph.add_run("_4711.")
    paragraph = document.add_paragraph("“")
    paragraph.add_run("Effective Date").bold = True
    paragraph.add_run("” means 1 January 2025, ")
    paragraph.add_run("unless").italic = True
    paragraph.add_run(" extended.")
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Item", "Price"
    html = (
        "<h1>Fees</h1><p>The fee is $<u>247</u>.83 per month for account <b>cust</b>_4711.</p>"
        "<p>“<strong>Effective Date</strong>” means 1 January 2025, <em>unless</em> <i>extended</i>.</p>"
        "<table><tr><th>Item</th><th>Price</th></tr></table>"
    )
    texts = {
        "docx": convert_file(write(tmp_path, "fee.docx", docx_bytes(document))).text,
        "html": convert_file(write(tmp_path, "fee.html", f"<html><body>{html}</body></html>".encode())).text,
        "epub": convert_file(write(tmp_path, "fee.epub", make_epub(html))).text,
    }
    for kind, text in texts.items():
        assert "The fee is $247.83 per month for account cust_4711." in text, (kind, text)
        assert "“Effective Date” means 1 January 2025, unless extended." in text, (kind, text)
        assert "# Fees" in text and "| Item | Price |" in text, (kind, text)  # headings and tables stay
