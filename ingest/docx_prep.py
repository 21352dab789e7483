"""Rewrite a DOCX before MarkItDown (mammoth) reads it, so that no contract words are lost on the way.

mammoth silently skips every WordprocessingML element it does not know, and with it the words
inside. A contract clause can sit in any of them, so :func:`prepare_docx` rewrites the document
(and its footnotes and endnotes) into elements mammoth does read:

* a tracked move (``w:moveTo``) is read where it was moved to, its old place (``w:moveFrom``) like a
  deletion: mammoth knows neither, so a moved clause would vanish from both places;
* simple fields (``w:fldSimple``: the shown result, e.g. a DOCPROPERTY value), custom XML and smart
  tags, bidirectional runs (``w:dir``, ``w:bdo``) are unwrapped: their runs are kept, the wrapper goes;
* ruby text keeps its base text (the reading aid above it is not contract text);
* a text box drawn only as DrawingML (``wps``, no VML copy) is handed to mammoth the way it reads
  VML text boxes, and markup-compatibility content with no ``mc:Fallback`` uses its ``mc:Choice``
  (mammoth reads only the Fallback, so a Choice-only block would be dropped whole);
* an ``w:altChunk`` that embeds HTML or plain text becomes paragraphs where it stands; any other
  embedded part is left alone and reported;
* automatic clause numbers ("1.1", "(a)", "Schedule C") are written into the text as Word shows
  them (:mod:`ingest.docx_numbering`): mammoth makes them Markdown lists that count 1., 2., ...;
* headers and footers, which mammoth never reads, are added once each at the end, labelled
  (``[Header] CONFIDENTIAL Contract No. K-2024-0091``).

Comments are not contract text and stay out, but their number is reported.

A document with unaccepted tracked changes is reported too: insertions are read, deletions are not.
So is one with hidden text (``w:vanish``, see :mod:`ingest.docx_hidden`): it is read, as if shown.
A file that is not a readable DOCX is handed back unchanged for the converter to judge.

Pure: bytes in, bytes (and warnings) out; no Django.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from dataclasses import dataclass, field

from bs4 import BeautifulSoup
from lxml import etree

from ingest.docx_hidden import has_hidden_text, hidden_styles
from ingest.docx_numbering import (
    Labeller,
    paragraph_numbering,
    read_numbering,
    read_style_numbering,
)
from ingest.sniff import ZIP_READ_ERRORS

MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
PACKAGE_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
TRACKED_CHANGES_WARNING = (
    "This document has unaccepted tracked changes; insertions are read, deletions are not."
)
HIDDEN_TEXT_WARNING = "This document contains hidden text; it is included in the text."

_UNWRAP = ("moveTo", "customXml", "smartTag", "dir", "bdo", "fldSimple")
_PROPERTIES = ("customXmlPr", "smartTagPr")  # a wrapper's own settings, not content
_RANGE_MARKS = ("moveFromRangeStart", "moveFromRangeEnd", "moveToRangeStart", "moveToRangeEnd")
_TRACKED = ("ins", "del", "moveFrom", "moveTo")
_TEXT_CHUNK_EXTENSIONS = (".htm", ".html", ".xhtml", ".txt")
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


@dataclass
class PreparedDocx:
    """The rewritten DOCX and what a reviewer should know about it."""

    data: bytes
    warnings: list[str] = field(default_factory=list)


def prepare_docx(data: bytes) -> PreparedDocx:
    """Rewrite the parts of the DOCX ``data`` that carry text (see the module doc)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = {info.filename: (info, archive.read(info)) for info in archive.infolist()}
    except ZIP_READ_ERRORS:
        return PreparedDocx(data)
    package = _Package(members)
    main = package.main_document()
    if main is None:
        return PreparedDocx(data)
    warnings: list[str] = []
    rewritten: dict[str, bytes] = {}
    tracked = hidden = False
    styles = None
    for path in [main, *package.related(main, "footnotes", "endnotes")]:
        root = package.xml(path)
        if root is None:
            continue
        w = etree.QName(root).namespace
        tracked = tracked or any(True for _ in root.iter(*(f"{{{w}}}{t}" for t in _TRACKED)))
        rewrite_part(root, w)
        if styles is None:
            styles = hidden_styles(_first_part(package, main, "styles"), w)
        hidden = hidden or has_hidden_text(root, w, styles)
        if path == main:
            _write_clause_numbers(root, w, package, path)
            warnings += _inline_alt_chunks(root, w, package, path)
            _append_headers_and_footers(root, w, package, path)
        rewritten[path] = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
    if hidden:
        warnings.insert(0, HIDDEN_TEXT_WARNING)
    if tracked:
        warnings.insert(0, TRACKED_CHANGES_WARNING)
    comments = _count_comments(package, main)
    if comments:
        warnings.append(f"This document has {comments} comment(s); comments are not part of its text.")
    return PreparedDocx(package.write(rewritten), warnings)


def rewrite_part(root: etree._Element, w: str) -> None:
    """Rewrite one WordprocessingML part in place so mammoth reads every word it shows."""
    _use_choice_without_fallback(root)
    _text_boxes_as_vml(root, w)
    for mark in list(root.iter(*(f"{{{w}}}{t}" for t in _RANGE_MARKS))):
        _remove(mark)
    for moved_away in list(root.iter(f"{{{w}}}moveFrom")):
        if etree.QName(moved_away.getparent()).localname == "rPr":
            moved_away.tag = f"{{{w}}}del"  # a paragraph mark moved away: mammoth joins it like a deleted one
        else:
            _remove(moved_away)
    for wrapper in list(root.iter(*(f"{{{w}}}{t}" for t in _UNWRAP))):
        for prop in wrapper.findall(f"{{{w}}}*"):
            if etree.QName(prop).localname in _PROPERTIES:
                wrapper.remove(prop)
        _unwrap(wrapper)
    for ruby in list(root.iter(f"{{{w}}}ruby")):
        base = [
            child
            for r in ruby.iterfind(f"{{{w}}}rubyBase/{{{w}}}r")
            for child in r
            if child.tag != f"{{{w}}}rPr"
        ]
        _replace(ruby, base)


def _use_choice_without_fallback(root: etree._Element) -> None:
    """mammoth reads only ``mc:Fallback``; where there is none, the first ``mc:Choice`` is the content."""
    for alternate in list(root.iter(f"{{{MC}}}AlternateContent")):
        if alternate.find(f"{{{MC}}}Fallback") is None:
            choice = alternate.find(f"{{{MC}}}Choice")
            _replace(alternate, list(choice) if choice is not None else [])


def _text_boxes_as_vml(root: etree._Element, w: str) -> None:
    """Move the text of a DrawingML text box into a ``w:pict`` beside it: mammoth reads text boxes
    only from VML (``w:pict``), and puts their paragraphs after the paragraph holding the box."""
    content = f"{{{w}}}txbxContent"
    for drawing in list(root.iter(f"{{{w}}}drawing")):
        boxes = [box for box in drawing.iter(content) if _outermost(box, drawing)]
        if boxes:
            pict = etree.Element(f"{{{w}}}pict")
            pict.extend(boxes)
            drawing.addnext(pict)


def _write_clause_numbers(root: etree._Element, w: str, package: _Package, path: str) -> None:
    """Write each numbered paragraph's label ("1.1", "(a)", "Schedule C") as text at its start and
    turn off its list numbering, so mammoth and markdownify count nothing themselves (see
    :mod:`ingest.docx_numbering`). Bullets and unknown lists are left as they are."""
    numbering = read_numbering(_first_part(package, path, "numbering"), w)
    if not numbering.lists:
        return
    styles = read_style_numbering(_first_part(package, path, "styles"), w)
    labeller = Labeller(numbering)
    for paragraph in list(root.iter(f"{{{w}}}p")):
        if paragraph.find(f"{{{w}}}pPr/{{{w}}}rPr/{{{w}}}del") is not None:
            continue  # its mark is deleted: it joins the next paragraph
        found = paragraph_numbering(paragraph, w, styles)
        shown = labeller.label(*found) if found else None
        if shown is None:
            continue
        label, suffix = shown
        ppr = paragraph.find(f"{{{w}}}pPr")
        for old in ppr.findall(f"{{{w}}}numPr"):
            ppr.remove(old)
        num_pr = etree.SubElement(ppr, f"{{{w}}}numPr")
        etree.SubElement(num_pr, f"{{{w}}}ilvl").set(f"{{{w}}}val", "0")
        etree.SubElement(num_pr, f"{{{w}}}numId").set(f"{{{w}}}val", "0")  # "not numbered"
        if label:
            ppr.addnext(_paragraph(w, label + ("" if suffix == "nothing" else " "))[0])


def _first_part(package: _Package, path: str, kind: str) -> etree._Element | None:
    found = package.related(path, kind)
    return package.xml(found[0]) if found else None


def _outermost(element: etree._Element, container: etree._Element) -> bool:
    """Whether no element of ``element``'s kind lies between it and ``container`` (a box in a box
    moves with its outer box)."""
    parent = element.getparent()
    while parent is not None and parent is not container:
        if parent.tag == element.tag:
            return False
        parent = parent.getparent()
    return True


def _inline_alt_chunks(root: etree._Element, w: str, package: _Package, path: str) -> list[str]:
    """Replace each ``w:altChunk`` holding HTML or text by its paragraphs; report any other kind."""
    unread = 0
    targets = package.relationships(path)
    for chunk in list(root.iter(f"{{{w}}}altChunk")):
        rid = next((v for k, v in chunk.attrib.items() if etree.QName(k).localname == "id"), None)
        target = targets.get(rid, ("", ""))[1] if rid is not None else ""
        raw = package.read(target) if target.lower().endswith(_TEXT_CHUNK_EXTENSIONS) else None
        if raw is None:
            unread += 1
            continue
        lines = _chunk_lines(raw, html=not target.lower().endswith(".txt"))
        _replace(chunk, [_paragraph(w, line) for line in lines])
    if unread:
        return [f"{unread} embedded document part(s) (altChunk) of a kind that cannot be read were left out."]
    return []


def _append_headers_and_footers(root: etree._Element, w: str, package: _Package, path: str) -> None:
    """Add the text of each distinct header and footer once, labelled ("[Header] Contract No. K-7"),
    at the end of the body: mammoth reads no header or footer, and a contract number or
    confidentiality legend may stand only there. At the end, not the start, so that a header is
    not taken for the document's title."""
    body = root.find(f"{{{w}}}body")
    if body is None:
        return
    targets = package.relationships(path)
    seen: list[str] = []
    for reference in root.iter(f"{{{w}}}headerReference", f"{{{w}}}footerReference"):
        rid = next((v for k, v in reference.attrib.items() if etree.QName(k).localname == "id"), None)
        kind, target = targets.get(rid, ("", "")) if rid is not None else ("", "")
        part = package.xml(target) if kind in ("header", "footer") else None
        if part is None:
            continue
        rewrite_part(part, w)
        for alternate in list(part.iter(f"{{{MC}}}AlternateContent")):  # one rendering, as mammoth reads it
            fallback = alternate.find(f"{{{MC}}}Fallback")
            _replace(alternate, list(fallback) if fallback is not None else [])
        paragraphs = [p for p in part.iter(f"{{{w}}}p") if _outermost(p, part)]
        words = " ".join(filter(None, (_paragraph_text(p, w) for p in paragraphs)))
        line = f"[{kind.capitalize()}] {words}"
        if words and line not in seen:
            seen.append(line)
    last = body[-1] if len(body) else None
    for line in seen:
        if last is not None and last.tag == f"{{{w}}}sectPr":
            last.addprevious(_paragraph(w, line))
        else:
            body.append(_paragraph(w, line))


def _paragraph_text(paragraph: etree._Element, w: str) -> str:
    """The words of one paragraph, tabs and breaks as spaces, whitespace runs as one space."""
    pieces = []
    for element in paragraph.iter(
        f"{{{w}}}t", f"{{{w}}}tab", f"{{{w}}}br", f"{{{w}}}cr", f"{{{w}}}noBreakHyphen"
    ):
        name = etree.QName(element).localname
        pieces.append(element.text or "" if name == "t" else "-" if name == "noBreakHyphen" else " ")
    return " ".join("".join(pieces).split())


def _count_comments(package: _Package, path: str) -> int:
    count = 0
    for target in package.related(path, "comments"):
        part = package.xml(target)
        if part is not None:
            count += sum(1 for e in part if etree.QName(e).localname == "comment")
    return count


def _chunk_lines(raw: bytes, *, html: bool) -> list[str]:
    if html:
        soup = BeautifulSoup(raw, "html.parser")
        for hidden in soup(["script", "style", "head", "template"]):
            hidden.decompose()
        text = soup.get_text("\n")
    else:
        text = raw.decode("utf-8", errors="replace")
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def _paragraph(w: str, text: str) -> etree._Element:
    paragraph = etree.Element(f"{{{w}}}p")
    t = etree.SubElement(etree.SubElement(paragraph, f"{{{w}}}r"), f"{{{w}}}t")
    t.text = text
    t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
    return paragraph


def _replace(element: etree._Element, replacements: list[etree._Element]) -> None:
    """Put ``replacements`` where ``element`` stands, and drop it."""
    parent = element.getparent()
    if parent is None:
        return
    index = parent.index(element)
    for offset, new in enumerate(replacements):
        parent.insert(index + offset, new)
    _remove(element)


def _unwrap(element: etree._Element) -> None:
    _replace(element, list(element))


def _remove(element: etree._Element) -> None:
    """Drop ``element`` (and what it holds), keeping the text that follows it in its parent."""
    parent = element.getparent()
    if parent is None:
        return
    if element.tail:
        previous = element.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + element.tail
        else:
            parent.text = (parent.text or "") + element.tail
    parent.remove(element)


class _Package:
    """The members of an OPC zip package and the relationships between its parts."""

    def __init__(self, members: dict[str, tuple[zipfile.ZipInfo, bytes]]):
        self._members = members

    def read(self, path: str) -> bytes | None:
        member = self._members.get(path)
        return member[1] if member else None

    def xml(self, path: str) -> etree._Element | None:
        raw = self.read(path)
        if raw is None:
            return None
        try:
            return etree.fromstring(raw, _PARSER)
        except etree.XMLSyntaxError:
            return None

    def relationships(self, path: str) -> dict[str, tuple[str, str]]:
        """Relationship id → (type name, target part path) of the part at ``path``."""
        folder, name = posixpath.split(path)
        root = self.xml(posixpath.join(folder, "_rels", f"{name}.rels"))
        found: dict[str, tuple[str, str]] = {}
        for rel in root.iter(f"{{{PACKAGE_RELS}}}Relationship") if root is not None else ():
            if rel.get("TargetMode") == "External":
                continue
            target = rel.get("Target", "")
            target = (
                target.lstrip("/")
                if target.startswith("/")
                else posixpath.normpath(posixpath.join(folder, target))
            )
            found[rel.get("Id", "")] = (rel.get("Type", "").rsplit("/", 1)[-1], target)
        return found

    def related(self, path: str, *kinds: str) -> list[str]:
        """Paths of the parts of ``kinds`` (relationship type names) that the part at ``path`` uses."""
        return [target for kind, target in self.relationships(path).values() if kind in kinds]

    def main_document(self) -> str | None:
        documents = self.related("", "officeDocument")
        return documents[0] if documents and documents[0] in self._members else None

    def write(self, replaced: dict[str, bytes]) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
            for name, (info, raw) in self._members.items():
                out.writestr(info, replaced.get(name, raw))
        return buffer.getvalue()
