"""Page-exact PDF text extraction with pypdfium2, plugged into MarkItDown as a converter.

Why not MarkItDown's own PDF converter: in markitdown 0.1.8 it keeps ``"\\f"`` page breaks
only on its pdfminer path, joins pages with blank lines (losing every page number) as soon
as one page looks like a form or table, and runs at a few pages per second. Auditors need
the physical page of every citation, so PDFs go through :class:`PageAwarePdfConverter`:
one pdfium text page per physical page, hundreds of pages per second.

The text of each page is the PDF's text layer in pdfium's reading order, lightly cleaned:
NFC-normalised (a Greek question mark used as a semicolon becomes ";"), typographic
ligatures spelt out ("ﬁ" becomes "fi"), no-break spaces and tabs become spaces, runs of
spaces collapse, lines are stripped, and pdfium's hyphen marker U+FFFE becomes ``-``.
NFKC is not used: it would turn a superscript footnote mark into a digit ("$5,000¹" into
"$5,0001") and "™" into "TM". pdfium gives one line per visual line and
no blank lines, so the paragraph structure is recovered from geometry: a vertical gap
clearly larger than the page's usual line pitch becomes a blank line.

A page without a usable text layer (an image and almost no text, or a layer of junk glyphs:
:func:`is_junk`) is listed in ``scanned_pages``; ``ingest.convert`` has it read by OCR (``ingest.ocr``).

pdfium is not thread-safe: convert in processes (Celery prefork workers), not threads; a
threaded web process (page images, glyph boxes) holds :data:`PDFIUM_LOCK` around every call.
"""

from __future__ import annotations

import re
import statistics
import threading
import unicodedata
import warnings
from dataclasses import dataclass, field
from typing import Any, BinaryIO, TypeVar

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from markitdown import DocumentConverter, DocumentConverterResult, StreamInfo

from ingest.convert_errors import ConversionError
from ingest.traced import Plain, Traced

# A page with fewer visible characters than this and an image on it is a scanned page: it is OCRed.
MIN_TEXT_CHARS_PER_PAGE = 20
# A text layer is junk (OCRed instead) when under this share of its visible characters are letters or digits
# (private-use glyphs, symbols, replacement characters: a font without its character map) ...
MIN_ALNUM_SHARE = 0.6
# ... or under this share of its words look like words: letters in one case pattern (lower, Title or UPPER),
# or a number; a layer of random glyphs mixes cases ("aQxZ") and symbols.
MIN_WORDLIKE_SHARE = 0.4
# A vertical step between two lines larger than this many "usual" line pitches starts a paragraph.
PARAGRAPH_GAP_RATIO = 1.45

_T = TypeVar("_T", Plain, Traced)
# Held around every pdfium call in a web process (gunicorn runs threads); Celery workers are processes.
PDFIUM_LOCK = threading.RLock()


_CLEAN = str.maketrans(
    {
        "\ufffe": "-",  # pdfium's marker for a hyphen it judged to be a line-break hyphen
        "\xa0": " ",
        "\t": " ",
        "\xad": None,  # soft hyphen: invisible in print
        "\u200b": None,  # zero-width space
        "\ufeff": None,
        # typographic ligatures, so "ﬁnancial" can be found by searching "financial"
        "\ufb00": "ff",
        "\ufb01": "fi",
        "\ufb02": "fl",
        "\ufb03": "ffi",
        "\ufb04": "ffl",
        "\ufb05": "st",
        "\ufb06": "st",
        **{chr(c): " " for c in range(0x20) if chr(c) not in "\n"},
        "\x7f": " ",
    }
)
_SPACES = re.compile(r" {2,}")
_LINE_SPLIT = re.compile(r"\r\n|\r|\n")
_LINE_EDGE_SPACES = re.compile(r" *\n *")
_BLANK_RUNS = re.compile(r"\n{3,}")
_TOKEN_EDGES = "\"'“”‘’()[]{}<>.,;:!?*-–—/§#$€£%&_=~·…|+"
# What forms fill in and layouts draw with type: signature lines, leaders, rules, redactions ("[***]"), left
# out of the junk measure (a signature page or a table of contents is all of these and a few words).
_FILLER = frozenset("_.-–—=*~·…[]()|/\\:")
_NUMBER = re.compile(r"\d[\d.,/%-]*")


@dataclass
class PdfText:
    """The text of every physical page, in order, plus what was noticed on the way."""

    pages: list[str]
    scanned_pages: list[int] = field(default_factory=list)  # 1-based, pages to OCR (no usable text layer)
    junk_pages: list[int] = field(default_factory=list)  # 1-based, those whose text layer is junk


def open_with_forms(source: Any, *, password: str | None = None) -> pdfium.PdfDocument:
    """The PDF opened as the converter opens it: its forms initialised (before any page is loaded), so
    :func:`load_page` draws what was typed into its fields. Raises ``pdfium.PdfiumError``."""
    pdf = pdfium.PdfDocument(source, password=password)
    with warnings.catch_warnings():  # a failed XFA load warns; the AcroForm fields are still read
        warnings.simplefilter("ignore")
        pdf.init_forms()  # before any page is loaded (pypdfium2), so field values can be flattened
    return pdf


def extract_pdf_pages(data: bytes, *, password: str | None = None) -> PdfText:
    """Return the cleaned text of each physical page of the PDF in ``data``.

    Raises :class:`ConversionError` with code ``encrypted`` (a password is needed) or ``corrupt``
    (pdfium cannot open it, or a page fails to load). Pages without a usable text layer are listed
    in ``scanned_pages`` (their text here is what the layer holds) for ``ingest.ocr`` to read:
    a page with an image and almost no text, or a page whose text is junk (:func:`is_junk`).
    """
    try:
        pdf = open_with_forms(data, password=password)
    except pdfium.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        if code in (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY):
            raise ConversionError(
                "encrypted",
                "This PDF is password-protected. "
                "Remove the password (or upload an unlocked copy) and try again.",
            ) from exc
        raise ConversionError(
            "corrupt", "This PDF is damaged or not a real PDF, so its text cannot be read."
        ) from exc
    try:
        if len(pdf) == 0:
            raise ConversionError("corrupt", "This PDF has no pages.")
        pages: list[str] = []
        scanned: list[int] = []
        junk: list[int] = []
        for index in range(len(pdf)):
            try:
                page = load_page(pdf, index)
            except pdfium.PdfiumError as exc:
                raise ConversionError(
                    "corrupt", f"Page {index + 1} of this PDF is damaged and cannot be read."
                ) from exc
            try:
                text = _page_text(page)
                if _visible_chars(text) < MIN_TEXT_CHARS_PER_PAGE:
                    if _has_image(page):
                        scanned.append(index + 1)
                elif is_junk(text):
                    scanned.append(index + 1)
                    junk.append(index + 1)
            finally:
                page.close()
            pages.append(text)
    finally:
        pdf.close()
    return PdfText(pages=pages, scanned_pages=scanned, junk_pages=junk)


def is_junk(text: str) -> bool:
    """Whether a page's text layer is junk, not words (:data:`MIN_ALNUM_SHARE`, :data:`MIN_WORDLIKE_SHARE`).
    Letters of any script count, so a layer in Greek or Cyrillic is not junk."""
    visible = [ch for ch in text if not ch.isspace() and ch not in _FILLER]
    if not visible:
        return False
    if sum(ch.isalnum() for ch in visible) < MIN_ALNUM_SHARE * len(visible):
        return True
    tokens = [t.strip(_TOKEN_EDGES) for t in text.split()]
    tokens = [t for t in tokens if t]
    if not tokens:
        return False
    wordlike = sum(
        (t.isalpha() and (t.islower() or t.isupper() or t.istitle())) or _NUMBER.fullmatch(t) is not None
        for t in tokens
    )
    return wordlike < MIN_WORDLIKE_SHARE * len(tokens)


def clean_word(word: str) -> str:
    """A word OCR read, cleaned as a text layer's characters are (ligatures spelt out, NFC, no spaces)."""
    return unicodedata.normalize("NFC", word.translate(_CLEAN)).replace(" ", "").replace("\n", "")


def load_page(pdf: pdfium.PdfDocument, index: int) -> pdfium.PdfPage:
    """Page ``index``, with what was typed into its form fields (an order form's customer name and
    fee) drawn into the page, where the text layer reads it: pdfium's page text leaves the fields
    out. The values come after the page's own text. Comments and stamps are not drawn in; pages
    without form fields are loaded as they are."""
    page = pdf[index]
    if pdf.formenv is None or not _keep_only_form_fields(page):
        return page
    page.flatten()  # changes the document in memory only; the page must be loaded again
    page.close()
    return pdf[index]


def _keep_only_form_fields(page: pdfium.PdfPage) -> int:
    """Remove every annotation but form fields from the page (in memory), so flattening draws no
    reviewer's comment or stamp into the contract text; returns how many form fields are left."""
    widgets = 0
    for i in reversed(range(pdfium_c.FPDFPage_GetAnnotCount(page.raw))):
        annot = pdfium_c.FPDFPage_GetAnnot(page.raw, i)
        subtype = pdfium_c.FPDFAnnot_GetSubtype(annot)
        pdfium_c.FPDFPage_CloseAnnot(annot)
        if subtype == pdfium_c.FPDF_ANNOT_WIDGET:
            widgets += 1
        else:
            pdfium_c.FPDFPage_RemoveAnnot(page.raw, i)
    return widgets


def _visible_chars(text: str) -> int:
    return len(text) - text.count(" ") - text.count("\n")


def _has_image(page: pdfium.PdfPage) -> bool:
    for _ in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=3):
        return True
    return False


def _page_text(page: pdfium.PdfPage) -> str:
    """One page's text: cleaned lines, a blank line where the layout shows a paragraph gap."""
    textpage = page.get_textpage()
    try:
        return clean_page_text(textpage, Plain).text
    finally:
        textpage.close()


def traced_page_text(textpage: pdfium.PdfTextPage) -> Traced:
    """The page's text exactly as the converter writes it, each character with the index of the raw
    character (in ``textpage.get_text_range()``) it came from: where its glyph box is
    (``ingest.pdf_boxes``)."""
    return clean_page_text(textpage, Traced)


def clean_page_text(textpage: pdfium.PdfTextPage, kind: type[_T]) -> _T:
    """The cleaning of a page's raw text, one step list for :class:`Plain` (the converter) and
    :class:`Traced` (the glyph boxes), so the two texts cannot differ."""
    raw = textpage.get_text_range()
    if not raw:
        return kind.lines("", [], [False])
    separators = [m.span() for m in _LINE_SPLIT.finditer(raw)]
    lines = _LINE_SPLIT.split(raw)
    gaps = _paragraph_gaps(textpage, raw, lines)
    page = kind.lines(raw, separators, gaps).translate(_CLEAN).nfc()  # a blank line marks a paragraph gap
    page = page.sub(_SPACES, " ").sub(_LINE_EDGE_SPACES, "\n")
    return page.sub(_BLANK_RUNS, "\n\n").strip(" \n")


def _paragraph_gaps(textpage: pdfium.PdfTextPage, raw: str, lines: list[str]) -> list[bool]:
    """For each line, whether a paragraph gap precedes it, judged from line positions.

    The baseline of each line's first visible character is looked up (one pdfium call per
    line); a step down the page larger than ``PARAGRAPH_GAP_RATIO`` times the page's median
    line pitch, or a jump back up (a new column or a reordered block), marks a gap.
    Pages with astral-plane characters (index mapping is UTF-16 based) get no gaps.
    """
    gaps = [False] * len(lines)
    if len(raw.encode("utf-16-le")) != 2 * len(raw):
        return gaps
    bottoms: list[tuple[int, float]] = []
    pos = 0
    for i, line in enumerate(lines):
        lead = len(line) - len(line.lstrip(" \xa0\t"))
        if lead < len(line):
            char_index = pdfium_c.FPDFText_GetCharIndexFromTextIndex(textpage.raw, pos + lead)
            if char_index >= 0:
                try:
                    _, bottom, _, _ = textpage.get_charbox(char_index, loose=True)
                    bottoms.append((i, bottom))
                except pdfium.PdfiumError:
                    pass
        pos += len(line) + _newline_len(raw, pos + len(line))
    steps = [(i, prev_b - b) for (_, prev_b), (i, b) in zip(bottoms, bottoms[1:])]
    pitches = [s for _, s in steps if s > 0.5]
    if len(pitches) < 3:
        return gaps
    usual = statistics.median(pitches)
    for i, step in steps:
        if step > PARAGRAPH_GAP_RATIO * usual or step < -0.5 * usual:
            gaps[i] = True
    return gaps


def _newline_len(raw: str, at: int) -> int:
    if raw.startswith("\r\n", at):
        return 2
    return 1 if at < len(raw) else 0


class PagedConverterResult(DocumentConverterResult):
    """A MarkItDown result that also keeps the text of each page untouched.

    MarkItDown post-processes ``markdown`` (it strips line ends, which can eat a ``"\\f"``);
    ``page_texts`` is what page numbering is built from.
    """

    def __init__(
        self,
        page_texts: list[str],
        scanned_pages: list[int] | None = None,
        junk_pages: list[int] | None = None,
    ):
        super().__init__(markdown="\f".join(page_texts))
        self.page_texts = page_texts
        self.scanned_pages = scanned_pages or []
        self.junk_pages = junk_pages or []


class PageAwarePdfConverter(DocumentConverter):
    """MarkItDown converter for PDFs: exact physical pages via pypdfium2."""

    def accepts(self, file_stream: BinaryIO, stream_info: StreamInfo, **kwargs: Any) -> bool:
        extension = (stream_info.extension or "").lower()
        mimetype = (stream_info.mimetype or "").lower()
        if extension == ".pdf" or mimetype in ("application/pdf", "application/x-pdf"):
            return True
        position = file_stream.tell()
        try:
            return b"%PDF-" in file_stream.read(1024)
        finally:
            file_stream.seek(position)

    def convert(self, file_stream: BinaryIO, stream_info: StreamInfo, **kwargs: Any) -> PagedConverterResult:
        data = file_stream.read()
        result = extract_pdf_pages(data, password=kwargs.get("pdf_password"))
        return PagedConverterResult(result.pages, result.scanned_pages, result.junk_pages)
