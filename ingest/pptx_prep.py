"""Rewrite a PPTX before MarkItDown reads it: automatic numbers as text, slide markers escaped.

:func:`prepare_pptx` does both, in every XML part under ``ppt/`` (MarkItDown reads the slides
and their notes).

**Automatic numbers.** python-pptx reads a paragraph's text without the number PowerPoint shows
before it (``a:buAutoNum``): "(a) Fees of $247.83" reads "Fees of $247.83". Each
auto-numbered paragraph gets its label, counted per text frame as :mod:`ingest.pptx_numbering`
describes, written as text at its start ("(a) "). The numbering is taken from the paragraph's own
properties, else from its text frame's list style (``a:lstStyle``); numbering a paragraph only
inherits from its slide layout or master is not seen (rare for numbers: masters bullet).

**Slide markers.** MarkItDown writes ``<!-- Slide number: N -->`` before each slide, and :mod:`ingest.convert`
cuts the pages at those markers. Slide text can hold the same characters (a pasted HTML
comment, or a deliberate one): read as a marker, it would move the rest of its slide to another
page, or, numbered 3000000, make three million empty pages. So before MarkItDown runs,
:func:`prepare_pptx` puts :data:`ESCAPE` after every ``<`` that opens ``<!--`` in the text of
the presentation's XML parts, which no real marker then contains; :func:`unescape` takes it out
again once the pages are cut. Escaping is reversible: an ``ESCAPE`` already in the text is doubled
first, so the text comes back exactly as written.

Pure: bytes in, bytes out; no Django.
"""

from __future__ import annotations

import copy
import io
import re
import zipfile

from lxml import etree

from ingest.pptx_numbering import Paragraph, paragraph_labels
from ingest.sniff import ZIP_READ_ERRORS

ESCAPE = "\ue001"  # private-use character, never a marker's
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
_ESCAPED = re.compile(f"{ESCAPE}({ESCAPE})?")
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_BULLETS = tuple(f"{{{A}}}{name}" for name in ("buNone", "buAutoNum", "buChar", "buBlip"))
_MAX_START = 32767  # the largest startAt the schema allows


def prepare_pptx(data: bytes) -> bytes:
    """The PPTX ``data`` with automatic numbers written as text and ``<!--`` escaped in the text of
    every XML part under ``ppt/``; ``data`` itself when nothing needs changing or it cannot be read
    (the converter judges it)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [(info, archive.read(info)) for info in archive.infolist()]
    except ZIP_READ_ERRORS:
        return data
    changed = False
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, raw in members:
            if info.filename.startswith("ppt/") and info.filename.endswith(".xml"):
                escaped = _escape_part(_number_part(raw))
                changed = changed or escaped is not raw
                raw = escaped
            archive.writestr(info, raw)
    return out.getvalue() if changed else data


def escape_text(text: str) -> str:
    """``text`` with :data:`ESCAPE` doubled and put after each ``<`` of ``<!--``."""
    return text.replace(ESCAPE, ESCAPE * 2).replace("<!--", f"<{ESCAPE}!--")


def unescape(text: str) -> str:
    """Undo :func:`escape_text`: a lone ESCAPE goes, a doubled one is one again."""
    return _ESCAPED.sub(lambda m: m.group(1) or "", text)


def _escape_part(raw: bytes) -> bytes:
    """One XML part with its text escaped, or ``raw`` itself (the same object) when unchanged."""
    if (
        b"<!--" not in raw.replace(b"&lt;", b"<")
        and b"&#" not in raw
        and b"CDATA" not in raw
        and ESCAPE.encode() not in raw
    ):
        return raw  # the usual case: nothing to escape, no need to parse
    try:
        root = etree.fromstring(raw, _PARSER)
    except etree.XMLSyntaxError:
        return raw
    for element in root.iter(etree.Element):
        if element.text:
            element.text = escape_text(element.text)
        if element.tail:
            element.tail = escape_text(element.tail)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)


def _number_part(raw: bytes) -> bytes:
    """One XML part with its automatic numbers written as text, or ``raw`` itself when it has none."""
    if b"buAutoNum" not in raw:
        return raw
    try:
        root = etree.fromstring(raw, _PARSER)
    except etree.XMLSyntaxError:
        return raw
    for body in [e for e in root.iter(etree.Element) if etree.QName(e).localname == "txBody"]:
        number_text_body(body)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)


def number_text_body(body: etree._Element) -> None:
    """Write the label of each auto-numbered paragraph of one text frame at its start."""
    paragraphs = body.findall(f"{{{A}}}p")
    styles = body.find(f"{{{A}}}lstStyle")
    labels = paragraph_labels([_numbering(p, styles) for p in paragraphs])
    for paragraph, label in zip(paragraphs, labels):
        if label:
            _prepend_text(paragraph, label + " ")


def _numbering(paragraph: etree._Element, styles: etree._Element | None) -> Paragraph:
    ppr = paragraph.find(f"{{{A}}}pPr")
    level = _number(ppr.get("lvl") if ppr is not None else None, 0, 8, 0)
    bullet = _bullet(ppr)
    if bullet is None and styles is not None:
        bullet = _bullet(styles.find(f"{{{A}}}lvl{level + 1}pPr"))
    empty = not any(t.text for t in paragraph.iter(f"{{{A}}}t"))
    if bullet is None or bullet.tag != f"{{{A}}}buAutoNum":
        return Paragraph(level, None, empty=empty)
    return Paragraph(level, bullet.get("type"), _number(bullet.get("startAt"), 1, _MAX_START, 1), empty)


def _bullet(properties: etree._Element | None) -> etree._Element | None:
    """The bullet kind (buNone, buAutoNum, buChar, buBlip) set in paragraph properties, if any."""
    if properties is None:
        return None
    return next((child for child in properties if child.tag in _BULLETS), None)


def _number(value: str | None, low: int, high: int, default: int) -> int:
    try:
        return max(low, min(high, int(value))) if value is not None else default
    except ValueError:
        return default


def _prepend_text(paragraph: etree._Element, text: str) -> None:
    """Put a run holding ``text`` before the paragraph's first run, in that run's formatting."""
    first = paragraph.find(f"{{{A}}}r")
    run = etree.Element(f"{{{A}}}r")
    if first is not None and first.find(f"{{{A}}}rPr") is not None:
        run.append(copy.deepcopy(first.find(f"{{{A}}}rPr")))
    etree.SubElement(run, f"{{{A}}}t").text = text
    ppr = paragraph.find(f"{{{A}}}pPr")
    if ppr is not None:
        ppr.addnext(run)
    else:
        paragraph.insert(0, run)
