"""DOCX pre-processing: Word elements mammoth skips are rewritten so their words reach the text.

DOCX files are built by hand here (a zip of WordprocessingML), since python-docx cannot write
tracked moves, fields, ruby or text boxes.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from ingest.convert import convert_file
from ingest.docx_prep import prepare_docx

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
NAMESPACES = (
    f'xmlns:w="{W}" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"'
)
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
TRACKED = ' w:id="{}" w:author="Counsel" w:date="2024-01-01T00:00:00Z"'


def run(text: str) -> str:
    return f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r>'


def para(inner: str, ppr: str = "") -> str:
    return f"<w:p>{ppr}{inner}</w:p>"


def part(root: str, inner: str) -> str:
    return f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:{root} {NAMESPACES}>{inner}</w:{root}>'


def make_docx(
    body: str,
    *,
    parts: dict[str, str] | None = None,
    rels: dict[str, tuple[str, str]] | None = None,
    sect: str = "",
) -> bytes:
    """A DOCX with ``body`` in its document; ``parts`` are extra members (path under word/ → text),
    ``rels`` the document's extra relationships (id → (type name, target))."""
    relationships = "".join(
        f'<Relationship Id="{rid}" Type="{REL}/{kind}" Target="{target}"/>'
        for rid, (kind, target) in (rels or {}).items()
    )
    files = {
        "[Content_Types].xml": (
            '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/word/document.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
        ),
        "_rels/.rels": (
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{REL}/officeDocument" Target="word/document.xml"/></Relationships>'
        ),
        "word/_rels/document.xml.rels": (
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f"{relationships}</Relationships>"
        ),
        "word/document.xml": part("document", f"<w:body>{body}<w:sectPr>{sect}</w:sectPr></w:body>"),
    }
    files.update({f"word/{name}": text for name, text in (parts or {}).items()})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def text_of(tmp_path: Path, data: bytes):
    path = tmp_path / "contract.docx"
    path.write_bytes(data)
    return convert_file(path)


# --- tracked changes and the elements mammoth does not know ------------------------------------


def test_a_tracked_move_keeps_the_clause_once_where_it_was_moved_to(tmp_path):
    body = (
        para(run("Clause 4. Payment is due in 30 days."))
        + para(
            f"<w:moveFrom{TRACKED.format(1)}>{run('Clause 9. Liability is capped at 2x fees.')}</w:moveFrom>"
        )
        + para(run("Clause 5. Notices are in writing."))
        + para(f"<w:moveTo{TRACKED.format(2)}>{run('Clause 9. Liability is capped at 2x fees.')}</w:moveTo>")
    )
    converted = text_of(tmp_path, make_docx(body))
    assert converted.text.count("Clause 9. Liability is capped at 2x fees.") == 1
    assert converted.text.index("Clause 5.") < converted.text.index("Clause 9.")
    assert any("tracked changes" in w for w in converted.warnings)


def test_tracked_insertions_and_deletions_are_read_as_accepted_and_say_so(tmp_path):
    body = para(
        run("Payment terms: ")
        + f"<w:ins{TRACKED.format(1)}>{run('Net 45')}</w:ins>"
        + f"<w:del{TRACKED.format(2)}><w:r><w:delText>Net 30</w:delText></w:r></w:del>"
    )
    converted = text_of(tmp_path, make_docx(body))
    assert "Payment terms: Net 45" in converted.text and "Net 30" not in converted.text
    assert converted.warnings == [
        "This document has unaccepted tracked changes; insertions are read, deletions are not."
    ]
    assert text_of(tmp_path, make_docx(para(run("Clean.")))).warnings == []


def test_words_inside_fields_custom_xml_direction_marks_and_ruby_are_kept(tmp_path):
    body = (
        para(
            run("Contract value: ")
            + '<w:fldSimple w:instr=" DOCPROPERTY Value "><w:r><w:t>EUR 1,250,000</w:t></w:r></w:fldSimple>'
        )
        + para(
            '<w:customXml w:element="party"><w:customXmlPr/><w:r><w:t>Globex Ltd</w:t></w:r></w:customXml>'
            + run(" is the Supplier.")
        )
        + '<w:customXml w:element="clause">'
        + para(run("Block-level custom XML clause 7."))
        + "</w:customXml>"
        + para(
            '<w:smartTag w:uri="urn:x" w:element="place"><w:r><w:t>London</w:t></w:r></w:smartTag>'
            + run(" courts.")
        )
        + para(
            '<w:dir w:val="rtl"><w:r><w:t>Account cust_4711</w:t></w:r></w:dir>'
            + '<w:bdo w:val="ltr"><w:r><w:t xml:space="preserve"> at $247.83</w:t></w:r></w:bdo>'
        )
        + para(
            run("Signed at ") + "<w:r><w:ruby><w:rubyPr/><w:rt><w:r><w:t>とうきょう</w:t></w:r></w:rt>"
            "<w:rubyBase><w:r><w:t>東京</w:t></w:r></w:rubyBase></w:ruby></w:r>" + run(".")
        )
    )
    text = text_of(tmp_path, make_docx(body)).text
    for words in (
        "Contract value: EUR 1,250,000",
        "Globex Ltd is the Supplier.",
        "Block-level custom XML clause 7.",
        "London courts.",
        "Account cust_4711 at $247.83",
        "Signed at 東京.",
    ):
        assert words in text, (words, text)
    assert "とうきょう" not in text  # the reading aid is not contract text


TEXT_BOX = (
    '<w:drawing><wp:anchor><wp:extent cx="100" cy="100"/><wp:docPr id="1" name="Box"/><a:graphic>'
    '<a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:wsp><wps:spPr/>'
    "<wps:txbx><w:txbxContent>{}</w:txbxContent></wps:txbx><wps:bodyPr/></wps:wsp></a:graphicData></a:graphic>"
    "</wp:anchor></w:drawing>"
)


def test_a_text_box_without_a_vml_fallback_is_read(tmp_path):
    box = TEXT_BOX.format(para(run("Special condition 7: exclusivity in the Territory.")))
    body = (
        para(run("Before the box.") + f"<w:r>{box}</w:r>")
        + para(
            '<mc:AlternateContent><mc:Choice Requires="wps"><w:r>'
            + TEXT_BOX.format(para(run("Choice-only box: fee $247.83.")))
            + "</w:r></mc:Choice></mc:AlternateContent>"
        )
        + '<mc:AlternateContent><mc:Choice Requires="wps">'
        + para(run("NEW_RENDERING"))
        + "</mc:Choice>"
        "<mc:Fallback>" + para(run("Fallback rendering kept.")) + "</mc:Fallback></mc:AlternateContent>"
    )
    text = text_of(tmp_path, make_docx(body)).text
    assert "Before the box." in text
    assert "Special condition 7: exclusivity in the Territory." in text
    assert "Choice-only box: fee $247.83." in text
    assert "Fallback rendering kept." in text and "NEW_RENDERING" not in text  # one rendering, not both


def test_an_html_alt_chunk_is_read_where_it_stands(tmp_path):
    body = para(run("Main terms.")) + '<w:altChunk r:id="rAlt"/>' + para(run("Signatures."))
    data = make_docx(
        body,
        parts={"chunk1.htm": "<html><body><p>Governing law: New York.</p><p>Fee $247.83.</p></body></html>"},
        rels={"rAlt": ("aFChunk", "chunk1.htm")},
    )
    text = text_of(tmp_path, data).text
    assert (
        text.index("Main terms.")
        < text.index("Governing law: New York.")
        < text.index("Fee $247.83.")
        < text.index("Signatures.")
    )


def test_preparing_leaves_a_plain_document_alone_and_a_broken_one_to_the_converter():
    plain = make_docx(para(run("Clause 1. Plain.")))
    assert prepare_docx(plain).warnings == []
    assert prepare_docx(b"not a zip").data == b"not a zip"


# --- headers, footers and comments ---------------------------------------------------------------


def test_header_and_footer_text_is_kept_once_and_labelled(tmp_path):
    from ingest.doctype import classify

    header = part("hdr", para(run("CONFIDENTIAL Contract No. ") + run("K-2024-0091")))
    footer = part(
        "ftr",
        para(run("Initials: ____"))
        + para('<w:fldSimple w:instr=" DOCPROPERTY Ref "><w:r><w:t>Ref cust_4711</w:t></w:r></w:fldSimple>'),
    )
    references = (
        '<w:headerReference w:type="default" r:id="rH"/><w:footerReference w:type="default" r:id="rF"/>'
    )
    body = (
        para(run("SUPPLY AGREEMENT"))
        + para(run("Section one."), f"<w:pPr><w:sectPr>{references}</w:sectPr></w:pPr>")
        + para(run("Section two."))
    )
    converted = text_of(
        tmp_path,
        make_docx(
            body,
            sect=references,
            parts={"header1.xml": header, "footer1.xml": footer},
            rels={"rH": ("header", "header1.xml"), "rF": ("footer", "footer1.xml")},
        ),
    )
    assert converted.text.count("[Header] CONFIDENTIAL Contract No. K-2024-0091") == 1
    assert converted.text.count("[Footer] Initials: ____ Ref cust_4711") == 1
    assert converted.text.index("Section two.") < converted.text.index("[Header]")
    assert classify(converted.text) == "Supply"  # the header is not read as the title


def test_comments_are_reported_as_not_part_of_the_text(tmp_path):
    comments = part(
        "comments",
        '<w:comment w:id="0" w:author="Counsel"><w:p><w:r><w:t>Confirm $247.83?</w:t></w:r></w:p></w:comment>',
    )
    body = para(
        '<w:commentRangeStart w:id="0"/>'
        + run("Fee $247.83.")
        + '<w:commentRangeEnd w:id="0"/>'
        + '<w:r><w:commentReference w:id="0"/></w:r>'
    )
    converted = text_of(
        tmp_path, make_docx(body, parts={"comments.xml": comments}, rels={"rC": ("comments", "comments.xml")})
    )
    assert "Fee $247.83." in converted.text and "Confirm" not in converted.text
    assert converted.warnings == ["This document has 1 comment(s); comments are not part of its text."]


def test_a_header_text_box_is_read_once(tmp_path):
    box = "<w:r><w:pict><w:txbxContent>" + para(run("Draft 3")) + "</w:txbxContent></w:pict></w:r>"
    header = part(
        "hdr",
        para(run("Contract K-7 ") + box)
        + '<mc:AlternateContent><mc:Choice Requires="wps">'
        + para(run("Page 1"))
        + "</mc:Choice>"
        + "<mc:Fallback>"
        + para(run("Page 1"))
        + "</mc:Fallback></mc:AlternateContent>",
    )
    data = make_docx(
        para(run("Body.")),
        sect='<w:headerReference w:type="default" r:id="rH"/>',
        parts={"header1.xml": header},
        rels={"rH": ("header", "header1.xml")},
    )
    assert text_of(tmp_path, data).text == "Body.\n\n[Header] Contract K-7 Draft 3 Page 1"


# --- automatic clause numbers --------------------------------------------------------------------


def level(ilvl: int, fmt: str, text: str, start: int = 1, extra: str = "") -> str:
    return (
        f'<w:lvl w:ilvl="{ilvl}"><w:start w:val="{start}"/><w:numFmt w:val="{fmt}"/>'
        f'<w:lvlText w:val="{text}"/>{extra}</w:lvl>'
    )


NUMBERING = part(
    "numbering",
    (
        '<w:abstractNum w:abstractNumId="0">'
        + level(0, "decimal", "%1.")
        + level(1, "decimal", "%1.%2")
        + level(2, "lowerLetter", "(%3)")
        + level(3, "lowerRoman", "(%4)")
        + "</w:abstractNum>"
        + '<w:abstractNum w:abstractNumId="1">'
        + level(0, "upperLetter", "Schedule %1", start=3)
        + "</w:abstractNum>"
        + '<w:abstractNum w:abstractNumId="2">'
        + level(0, "none", "")
        + "</w:abstractNum>"
        + '<w:abstractNum w:abstractNumId="3">'
        + level(0, "upperRoman", "ARTICLE %1", extra='<w:suff w:val="space"/>')
        + level(1, "decimal", "Section %1.%2", extra="<w:isLgl/>")
        + "</w:abstractNum>"
        + '<w:abstractNum w:abstractNumId="4">'
        + level(0, "bullet", "•")
        + "</w:abstractNum>"
        + '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'
        + '<w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>'
        + '<w:num w:numId="3"><w:abstractNumId w:val="2"/></w:num>'
        + '<w:num w:numId="4"><w:abstractNumId w:val="3"/></w:num>'
        + '<w:num w:numId="5"><w:abstractNumId w:val="4"/></w:num>'
        + '<w:num w:numId="6"><w:abstractNumId w:val="0"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="7"/></w:lvlOverride></w:num>'
    ),
)
STYLES = part(
    "styles",
    (
        '<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/>'
        '<w:pPr><w:numPr><w:numId w:val="4"/></w:numPr></w:pPr></w:style>'
        '<w:style w:type="paragraph" w:styleId="ArticleBody"><w:name w:val="Article Body"/><w:basedOn w:val="Section"/></w:style>'
        '<w:style w:type="paragraph" w:styleId="Section"><w:name w:val="Section"/>'
        '<w:pPr><w:numPr><w:ilvl w:val="1"/><w:numId w:val="4"/></w:numPr></w:pPr></w:style>'
    ),
)


def numbered(text: str, num: int | None = None, ilvl: int | None = None, style: str | None = None) -> str:
    ppr = f'<w:pStyle w:val="{style}"/>' if style else ""
    if num is not None:
        ppr += (
            "<w:numPr>"
            + (f'<w:ilvl w:val="{ilvl}"/>' if ilvl is not None else "")
            + f'<w:numId w:val="{num}"/></w:numPr>'
        )
    return para(run(text), f"<w:pPr>{ppr}</w:pPr>" if ppr else "")


def numbered_text(tmp_path: Path, body: str) -> str:
    data = make_docx(
        body,
        parts={"numbering.xml": NUMBERING, "styles.xml": STYLES},
        rels={"rN": ("numbering", "numbering.xml"), "rS": ("styles", "styles.xml")},
    )
    return text_of(tmp_path, data).text


def test_clause_numbers_are_written_as_word_shows_them(tmp_path):
    # mammoth made every numbered paragraph a Markdown list item "1.", "2.", ...: "1.1", "(a)",
    # "Schedule C" were rewritten, restarted or invented
    body = (
        numbered("Definitions", 1, 0)
        + numbered("Affiliate means any entity.", 1, 1)
        + numbered("Business Day means a day.", 1, 1)
        + numbered("first sub item", 1, 2)
        + numbered("second sub item", 1, 2)
        + numbered("roman item", 1, 3)
        + para(run("An unnumbered paragraph between clauses."))
        + numbered("Payment. The Customer shall pay.", 1, 0)
        + numbered("Fees of $247.83 are due.", 1, 1)
        + numbered("later sub item", 1, 2)
        + numbered("Pricing schedule", 2, 0)
        + numbered("Service levels", 2, 0)
        + numbered("WHEREAS the parties agree.", 3, 0)
        + numbered("Restarted list item.", 6, 0)
    )
    lines = [line for line in numbered_text(tmp_path, body).split("\n") if line.strip()]
    assert lines == [
        "1. Definitions",
        "1.1 Affiliate means any entity.",
        "1.2 Business Day means a day.",
        "(a) first sub item",
        "(b) second sub item",
        "(i) roman item",
        "An unnumbered paragraph between clauses.",
        "2. Payment. The Customer shall pay.",
        "2.1 Fees of $247.83 are due.",
        "(a) later sub item",
        "Schedule C Pricing schedule",
        "Schedule D Service levels",
        "WHEREAS the parties agree.",
        "7. Restarted list item.",
    ]


def test_numbering_from_a_paragraph_style_and_legal_numbering(tmp_path):
    body = (
        numbered("Definitions", style="Heading1")
        + numbered("Terms are defined here.", style="ArticleBody")
        + numbered("More terms.", style="Section")
        + numbered("Term and Termination", style="Heading1")
        + numbered("Cure periods.", style="Section")
        + numbered("Not numbered after all.", 0, style="Section")
    )
    lines = [line for line in numbered_text(tmp_path, body).split("\n") if line.strip()]
    assert lines == [
        "# ARTICLE I Definitions",
        "Section 1.1 Terms are defined here.",
        "Section 1.2 More terms.",
        "# ARTICLE II Term and Termination",
        "Section 2.1 Cure periods.",
        "Not numbered after all.",
    ]


def test_bullets_stay_a_list(tmp_path):
    text = numbered_text(tmp_path, numbered("first point", 5, 0) + numbered("second point", 5, 0))
    assert "first point" in text and "second point" in text
    assert "1." not in text and "2." not in text


def test_number_formats_and_restarts_follow_word():
    from ingest.docx_numbering import Labeller, Level, Numbering, format_number

    assert [format_number(n, "lowerLetter") for n in (1, 26, 27, 28)] == ["a", "z", "aa", "bb"]
    assert [format_number(n, "upperRoman") for n in (4, 9, 14, 1990)] == ["IV", "IX", "XIV", "MCMXC"]
    assert format_number(7, "decimalZero") == "07" and format_number(3, "ordinalText") == "3"
    # level 1 never restarts (lvlRestart 0): exhibits keep counting across articles
    numbering = Numbering(
        abstract={
            "0": {0: Level(text="Article %1"), 1: Level(fmt="upperLetter", text="Exhibit %2", restart=0)}
        },
        lists={"1": ("0", {}, {})},
    )
    labeller = Labeller(numbering)
    shown = [labeller.label("1", ilvl)[0] for ilvl in (0, 1, 1, 0, 1)]
    assert shown == ["Article 1", "Exhibit A", "Exhibit B", "Article 2", "Exhibit C"]
    assert labeller.label("9", 0) is None  # a list the numbering part does not define


# --- tables ----------------------------------------------------------------------------------


def cell(text: str, props: str = "") -> str:
    return f"<w:tc><w:tcPr>{props}</w:tcPr>{para(run(text))}</w:tc>"


def test_a_merged_down_cell_leaves_the_cells_below_in_their_columns(tmp_path):
    # mammoth writes w:vMerge as rowspan, which markdownify does not count: the row below a merged
    # cell moved one column left ("$12.00" under Item, "cust_4712" under Amount)
    restart, merged = '<w:vMerge w:val="restart"/>', "<w:vMerge/>"
    rows = [
        cell("Item") + cell("Amount") + cell("Account"),
        cell("Service fee", restart) + cell("$247.83") + cell("cust_4711"),
        cell("", merged) + cell("$12.00") + cell("cust_4712 | EU"),
        cell("Total across", '<w:gridSpan w:val="2"/>') + cell("$259.83"),
    ]
    table = (
        "<w:tbl><w:tblPr/><w:tblGrid><w:gridCol/><w:gridCol/><w:gridCol/></w:tblGrid>"
        + "".join(f"<w:tr>{row}</w:tr>" for row in rows)
        + "</w:tbl>"
    )
    text = text_of(tmp_path, make_docx(table)).text
    lines = [line for line in text.splitlines() if line.startswith("|")]
    assert lines[3:] == [
        "| Service fee | $247.83 | cust_4711 |",
        r"|  | $12.00 | cust_4712 \| EU |",
        "| Total across |  | $259.83 |",
    ], text


# --- hidden text -----------------------------------------------------------------------------

HIDDEN_WARNING = "This document contains hidden text; it is included in the text."


def test_hidden_text_is_read_and_reported(tmp_path):
    # w:vanish text was read as if it were visible, with no word to the reviewer
    hidden = para(
        run("Visible fee $247.83.")
        + '<w:r><w:rPr><w:vanish/></w:rPr><w:t xml:space="preserve"> Rebate 3%.</w:t></w:r>'
    )
    converted = text_of(tmp_path, make_docx(hidden))
    assert "Visible fee $247.83. Rebate 3%." in converted.text
    assert HIDDEN_WARNING in converted.warnings
    shown = para('<w:r><w:rPr><w:vanish w:val="0"/></w:rPr><w:t>Shown after all.</w:t></w:r>')
    assert HIDDEN_WARNING not in text_of(tmp_path, make_docx(shown)).warnings
    mark_only = para(run("Only the paragraph mark is hidden."), "<w:pPr><w:rPr><w:vanish/></w:rPr></w:pPr>")
    assert HIDDEN_WARNING not in text_of(tmp_path, make_docx(mark_only)).warnings


def test_text_hidden_by_its_style_is_reported(tmp_path):
    styles = part(
        "styles",
        '<w:style w:type="character" w:styleId="Secret"><w:rPr><w:vanish/></w:rPr></w:style>'
        '<w:style w:type="paragraph" w:styleId="Note"><w:rPr><w:vanish/></w:rPr></w:style>',
    )
    by_run = para('<w:r><w:rPr><w:rStyle w:val="Secret"/></w:rPr><w:t>Side letter: cust_4711.</w:t></w:r>')
    by_paragraph = para(run("Internal note."), '<w:pPr><w:pStyle w:val="Note"/></w:pPr>')
    for body in (by_run, by_paragraph):
        converted = text_of(
            tmp_path, make_docx(body, parts={"styles.xml": styles}, rels={"rS": ("styles", "styles.xml")})
        )
        assert HIDDEN_WARNING in converted.warnings, body
