"""HTML and Markdown: no executable markup, angle brackets of contract text kept, the declared
encoding read, Word's HTML, text outside the first body, merged table cells, hidden text.
"""

from __future__ import annotations

import io
import re

import pytest

from ingest.convert import convert_file
from tests.unit.convert_helpers import write


def test_html_keeps_no_executable_markup(tmp_path):
    html = (
        b"<html><head><script>steal()</script><style>p{}</style></head><body>"
        b"<h1>Services Agreement</h1><p>Payment is due within 30 days.</p>"
        b"<script type='text/javascript'>alert('x')</script>"
        b"<a href='javascript:alert(1)'>click</a><img src=x onerror=alert(2)></body></html>"
    )
    converted = convert_file(write(tmp_path, "page.html", html))
    assert converted.kind == "html"
    assert "Payment is due within 30 days." in converted.text
    lowered = converted.text.lower()
    for bad in ("<script", "alert(", "steal(", "javascript:", "onerror"):
        assert bad not in lowered


def test_markdown_raw_html_is_neutralised(tmp_path):
    md = b"# Terms\n\nFees are due.\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n[pay](javascript:alert(3))\n"
    converted = convert_file(write(tmp_path, "terms.md", md))
    assert "Fees are due." in converted.text
    assert "alert(" not in converted.text and "javascript:" not in converted.text


def test_angle_brackets_in_contract_text_are_kept_in_every_format(tmp_path):
    # "<Base Fee>" is a defined term, not a <base> tag: stripping it (and, with no ">" nearby, the
    # text up to the next ">" paragraphs later) lost contract words
    import docx

    document = docx.Document()
    document.add_paragraph("1. Fees. The Customer shall pay the <Base Fee> plus 2% each month.")
    document.add_paragraph("2. Cap. Liability is capped at <Input Amount> dollars.")
    document.add_paragraph("3. Discounts. Orders of <Meta quantity (see Schedule 2) get 5% off.")
    document.add_paragraph("4. Law. New York law governs. 5. Price > list is forbidden.")
    buffer = io.BytesIO()
    document.save(buffer)
    text = convert_file(write(tmp_path, "angle.docx", buffer.getvalue())).text
    for words in (
        "the <Base Fee> plus 2%",
        "capped at <Input Amount> dollars",
        "Orders of <Meta quantity (see Schedule 2)",
        "New York law governs",
        "Price > list",
    ):
        assert words in text

    html = (
        b"<html><body><p>The Customer shall pay the &lt;Base Fee&gt; plus 2%.</p><p>Orders of &lt;Link units get"
        b" a discount.</p><p>Termination on 90 days notice.</p><p>Price &gt; list is forbidden.</p></body></html>"
    )
    text = convert_file(write(tmp_path, "angle.html", html)).text
    for words in (
        "the <Base Fee> plus 2%",
        "Orders of <Link units get a discount.",
        "Termination on 90 days notice.",
    ):
        assert words in text

    md = b"The fee is the <Base Fee> plus 2%. The <Form of Notice> is in Exhibit A.\n\nThe amount <b>shall</b> be paid.\n"
    text = convert_file(write(tmp_path, "angle.md", md)).text
    for words in (
        "the <Base Fee> plus 2%",
        "The <Form of Notice> is in Exhibit A.",
        "The amount <b>shall</b> be paid.",
    ):
        assert words in text


def test_markdown_tags_are_removed_only_in_real_tag_shape(tmp_path):
    md = (
        b'# Terms\n\nFees are <style>p{}</style>due.\n\n<form action="https://x.test">Sign</form> here.'
        b" <meta http-equiv=refresh content=0> <input name=a>\n\nA <Link to\nthe schedule> stays.\n"
    )
    text = convert_file(write(tmp_path, "terms.md", md)).text
    assert "Fees are due." in text and "Sign here." in text
    for gone in ("<style", "<form", "</form", "<meta", "<input"):
        assert gone not in text
    assert "A <Link to\nthe schedule> stays." in text  # a newline inside: not a tag


@pytest.mark.parametrize(
    "html",
    [
        b"<html><head><title>Agreement</title><body><p>The Fee is $247.83 per month.</p></body></html>",  # no </head>
        b"<html><head><meta charset='utf-8'><p>The Fee is $247.83 per month.</p>",
    ],
)
def test_html_whose_head_is_not_closed_keeps_its_text(tmp_path, html):
    html = html.replace(b"<html><head>", b"<html><head><noscript>Please enable JavaScript</noscript>")
    text = convert_file(write(tmp_path, "page.html", html)).text
    assert "The Fee is $247.83 per month." in text and "JavaScript" not in text


@pytest.mark.parametrize(
    "head, text, encoding",
    [
        ('<meta charset="iso-8859-2">', "Zapłata: 247,83 zł w ciągu 14 dni; Łódź, żółć.", "iso-8859-2"),
        (
            '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">',
            "Оплата 247,83 руб. в течение 14 дней.",
            "cp1251",
        ),
        ("<meta charset='Shift_JIS'>", "支払額は247.83ドルとする。", "shift_jis"),
        ('<meta charset="windows-1252">', "GROß–Vertrag: Preis 5 €, Gemäß § 5 für Müller.", "cp1252"),
        ('<meta charset="iso-8859-2">', "Zapłata 247,83 zł (saved as UTF-8 after all).", "utf-8"),
        ('<meta charset="base64">', "Gemäß § 5 für Müller.", "cp1252"),  # no text encoding: the usual guess
    ],
)
def test_html_is_read_in_the_encoding_it_declares(tmp_path, head, text, encoding):
    # a page in a legacy encoding was decoded as cp1252 whatever its <meta charset> said: garbled
    html = f"<html><head>{head}<title>t</title></head><body><p>{text}</p></body></html>".encode(encoding)
    assert text in convert_file(write(tmp_path, "page.html", html)).text


def test_xhtml_is_read_in_the_encoding_its_xml_prolog_declares(tmp_path):
    text = "Zapłata: 247,83 zł; Łódź."
    html = f'<?xml version="1.0" encoding="ISO-8859-2"?><html><body><p>{text}</p></body></html>'.encode(
        "iso-8859-2"
    )
    assert text in convert_file(write(tmp_path, "page.html", html)).text


def test_word_html_list_labels_come_without_conditional_markers(tmp_path):
    # Word's "Save as HTML" writes list labels inside <![if !supportLists]> ... <![endif]>: the
    # markers came out as text glued to the clause number ("if !supportLists1.1 endifFees")
    html = (
        b"<html><body>"
        b"<p style='mso-list:l0 level2 lfo1'><![if !supportLists]><span style='mso-list:Ignore'>1.1<span>&nbsp;&nbsp; "
        b"</span></span><![endif]>Fees of $247.83 are due.</p>"
        b"<p style='mso-list:l0 level3 lfo1'><![if !supportLists]><span style='mso-list:Ignore'>(a)<span>&nbsp; "
        b"</span></span><![ENDIF]>Sub item for cust_4711.</p></body></html>"
    )
    text = convert_file(write(tmp_path, "word.html", html)).text
    assert re.search(r"^1\.1\s+Fees of \$247\.83 are due\.$", text, re.M), text
    assert re.search(r"^\(a\)\s+Sub item for cust_4711\.$", text, re.M), text
    assert "supportLists" not in text and "endif" not in text.lower()


def test_html_text_outside_the_first_body_is_kept_and_the_head_is_not(tmp_path):
    # only the first <body> was converted: a signature block after </body>, or a second body, was lost
    html = (
        b"<!DOCTYPE html><html><head><title>Browser tab title</title><style>p{}</style></head>"
        b"<body><p>Clause 1. Fees of $247.83 are due.</p></body>"
        b"<body><p>Clause 2. Account cust_4711.</p></body></html>\n<p>Signed: Jane Doe</p>"
    )
    text = convert_file(write(tmp_path, "page.html", html)).text
    assert (
        text.index("Clause 1. Fees of $247.83 are due.")
        < text.index("Clause 2. Account cust_4711.")
        < text.index("Signed: Jane Doe")
    )
    assert "Browser tab title" not in text and "p{}" not in text
    no_body = convert_file(
        write(tmp_path, "bare.html", b"<html><p>Clause 3. Notices.</p></html>\n<p>tail</p>")
    ).text
    assert "Clause 3. Notices." in no_body and "tail" in no_body


def table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("|")]


def test_a_merged_down_html_cell_leaves_the_cells_below_in_their_columns(tmp_path):
    # rowspan cells were not counted: "| $12.00 | cust_4712 |" landed under Item | Amount
    html = (
        b"<html><body><table>"
        b"<tr><th>Item</th><th>Amount</th><th>Account</th></tr>"
        b"<tr><td rowspan='2'>Service fee</td><td>$247.83</td><td>cust_4711</td></tr>"
        b"<tr><td>$12.00</td><td>cust_4712</td></tr>"
        b"<tr><td colspan='2'>Total across</td><td>$259.83</td></tr>"
        b"<tr><td>Setup</td><td rowspan='3'>$99.00</td><td>cust_1</td></tr>"
        b"<tr><td>Support</td></tr>"
        b"<tr><td>Pipe | inside</td><td>a|b</td></tr>"
        b"</table></body></html>"
    )
    rows = table_rows(convert_file(write(tmp_path, "fees.html", html)).text)
    assert rows == [
        "| Item | Amount | Account |",
        "| --- | --- | --- |",
        "| Service fee | $247.83 | cust_4711 |",
        "|  | $12.00 | cust_4712 |",
        "| Total across |  | $259.83 |",
        "| Setup | $99.00 | cust_1 |",
        "| Support |  |  |",
        r"| Pipe \| inside |  | a\|b |",
    ], rows


@pytest.mark.parametrize(
    "hidden",
    [
        '<div style="display:none">Rebate 3%.</div>',
        "<p hidden>Rebate 3%.</p>",
        "<span style='DISPLAY: None'>Rebate 3%.</span>",
        '<span style="visibility:hidden">Rebate 3%.</span>',
        "<span style='mso-hide:all'>Rebate 3%.</span>",
    ],
)
def test_hidden_html_text_is_read_and_reported(tmp_path, hidden):
    # text hidden by display:none or the hidden attribute was read as if visible, with no warning
    html = f"<html><body><p>Fee $247.83.</p>{hidden}<p hidden> </p></body></html>".encode()
    converted = convert_file(write(tmp_path, "page.html", html))
    assert "Rebate 3%." in converted.text
    assert converted.warnings == ["This document contains hidden text; it is included in the text."]
    plain = convert_file(
        write(
            tmp_path,
            "plain.html",
            b"<html><body><p hidden> </p><p style='display:block'>Fee.</p></body></html>",
        )
    )
    assert plain.warnings == []
