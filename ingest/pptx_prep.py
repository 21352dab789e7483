"""Keep a PPTX's own text from passing for MarkItDown's slide markers.

MarkItDown writes ``<!-- Slide number: N -->`` before each slide, and :mod:`ingest.convert`
cuts the pages at those markers. Slide text can hold the same characters (a pasted HTML
comment, or a deliberate one): read as a marker, it moved the rest of its slide to another page,
or, numbered 3000000, made three million empty pages. So before MarkItDown runs,
:func:`escape_markers` puts :data:`ESCAPE` after every ``<`` that opens ``<!--`` in the text of
the presentation's XML parts, which no real marker then contains; :func:`unescape` takes it out
again once the pages are cut. Escaping is reversible: an ``ESCAPE`` already in the text is doubled
first, so the text comes back exactly as written.

Pure: bytes in, bytes out; no Django.
"""
from __future__ import annotations

import io
import re
import zipfile

from lxml import etree

ESCAPE = "\ue001"  # private-use character, never a marker's
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
_ESCAPED = re.compile(f"{ESCAPE}({ESCAPE})?")


def escape_markers(data: bytes) -> bytes:
    """The PPTX ``data`` with ``<!--`` escaped in the text of every XML part under ``ppt/``;
    ``data`` itself when nothing needs escaping or it cannot be read (the converter judges it)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [(info, archive.read(info)) for info in archive.infolist()]
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, ValueError):
        return data
    changed = False
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, raw in members:
            if info.filename.startswith("ppt/") and info.filename.endswith(".xml"):
                escaped = _escape_part(raw)
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
    if b"<!--" not in raw.replace(b"&lt;", b"<") and b"&#" not in raw and b"CDATA" not in raw \
            and ESCAPE.encode() not in raw:
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
