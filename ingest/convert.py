"""Turn an uploaded file into document text with a page table.

Everything but XLSX goes through one MarkItDown instance that knows exactly the formats we
review: its own DOCX, PPTX, EPUB and plain-text converters (with their HTML written by ours, and
EPUB chapters read whole in their own encoding, :mod:`ingest.office_converters`), our HTML converter that
reads the whole document and gives every table row all its cells
(:class:`ingest.html_body.WholeHtmlConverter`), and our page-exact PDF converter
(:class:`ingest.pdf_pages.PageAwarePdfConverter`) instead of its pdfminer one. DOCX and PPTX files
are rewritten first (:mod:`ingest.docx_prep`, :mod:`ingest.pptx_prep`) so that no words are lost.

The result's ``text`` joins pages with ``"\\f"``; ``pages`` says where each page is:

* PDF: physical pages, exact (one pdfium text page per PDF page). A page without a usable text layer
  (a scan, or a layer of junk glyphs) is read by OCR (:mod:`ingest.ocr`); its text takes the place
  of the layer's, and ``ocr`` keeps its confidence and word boxes.
* PPTX: one page per slide (MarkItDown's ``<!-- Slide number: N -->`` markers, removed; slide text
  that looks like one stays text, and automatic numbers are written into the text, see
  :mod:`ingest.pptx_prep`).
* XLSX: one page per sheet, starting ``## SheetName`` (our own reader, :mod:`ingest.xlsx`:
  MarkItDown's pandas path rewrites cell values).
* DOCX, HTML, EPUB: the pages LibreOffice lays the original out on (``layout``), each found in our
  text by the words it starts with (:func:`ingest.office_boxes.page_starts`).
* Without a layout, and for Markdown and text: no physical pages, so pages of about 3,000 characters
  are cut at paragraph boundaries and ``pages_estimated`` is True, except for a text or
  Markdown file that carries its own form feeds: those are its pages.

Bad input raises :class:`ConversionError` with a stable ``code`` and a sentence for people.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
from celery.exceptions import SoftTimeLimitExceeded
from markitdown import (
    PRIORITY_GENERIC_FILE_FORMAT,
    FileConversionException,
    MarkItDown,
    MarkItDownException,
    StreamInfo,
)
from markitdown.converters import PlainTextConverter

from ingest.charsets import decode_html, decode_text
from ingest.convert_errors import CODES, ConversionError
from ingest.docx_prep import HIDDEN_TEXT_WARNING, prepare_docx
from ingest.html_body import WholeHtmlConverter
from ingest.ocr import OcrOptions, OcrPage, PageDone, read_pages
from ingest.office_boxes import fold, page_starts, read_layer, split_pages
from ingest.office_converters import (
    DocxTablesConverter,
    EpubChaptersConverter,
    PptxTablesConverter,
)
from ingest.office_pdf import OFFICE_KINDS
from ingest.pages import PageSpan, estimate_pages, join_pages
from ingest.pdf_pages import (
    MIN_TEXT_CHARS_PER_PAGE,
    PDFIUM_LOCK,
    PageAwarePdfConverter,
    PagedConverterResult,
    load_page,
    open_with_forms,
)
from ingest.pdf_render import PageImageError
from ingest.pptx_prep import prepare_pptx, unescape
from ingest.sniff import TEXT_KINDS, ZIP_KINDS, check_zip_safety, sniff_kind
from ingest.xlsx import sheet_pages

__all__ = ["CODES", "ConversionError", "Converted", "convert_file", "sniff_kind", "markitdown_instance"]

DEFAULT_MAX_BYTES = 100 * 1024 * 1024
# (original bytes, kind) -> the PDF LibreOffice lays out of it (ingest.office_pdf); raises PageImageError
Layout = Callable[[bytes, str], bytes]
# Raised into whatever runs when the worker's time limit is reached: never the file's fault, so never
# turned into "damaged" by the broad handlers around the libraries below (ingest.pipeline says so in words).
_NOT_THE_FILE = (ConversionError, SoftTimeLimitExceeded)
ESTIMATED_PAGE_CHARS = 3000

_STREAM_INFO = {
    "pdf": StreamInfo(extension=".pdf", mimetype="application/pdf"),
    "docx": StreamInfo(
        extension=".docx", mimetype="application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    ),
    "xlsx": StreamInfo(
        extension=".xlsx", mimetype="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    ),
    "pptx": StreamInfo(
        extension=".pptx",
        mimetype="application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ),
    "epub": StreamInfo(extension=".epub", mimetype="application/epub+zip"),
    "html": StreamInfo(extension=".html", mimetype="text/html", charset="utf-8"),
    "markdown": StreamInfo(extension=".md", mimetype="text/markdown", charset="utf-8"),
    "text": StreamInfo(extension=".txt", mimetype="text/plain", charset="utf-8"),
}
# Options MarkItDown hands on to markdownify (DOCX, HTML, EPUB, PPTX tables). Exact values must
# survive conversion verbatim: markdownify would otherwise write "cust_4711" as "cust\\_4711" (and
# escape "*"), and write <sup>/<sub> with no mark at all, so "$5,000" with footnote 1 became
# "$5,0001"; "^1^" and "~2~" keep such a mark apart from the number it follows. Bold, italic and
# underline are dropped, their words kept: a value or defined term formatted in part
# ("$<u>247</u>.83", "**cust**_4711") could not be found by a plain quote. Headings and tables stay.
_MARKDOWNIFY: dict[str, Any] = {  # markdownify's options, through MarkItDown's **kwargs
    "escape_underscores": False,
    "escape_asterisks": False,
    "sup_symbol": "^",
    "sub_symbol": "~",
    "strip": ["b", "strong", "i", "em", "u"],
}
# Word superscripts ordinals by default: "15<sup>th</sup>" is written "15th", not "15^th^".
_SUPERSCRIPT_ORDINAL = re.compile(r"(?<=\d)\^(st|nd|rd|th)\^")
# A footnote reference came out as a superscript link to its note, "^^[[1]](#footnote-1)^^" (mammoth's
# <sup> inside Word's own superscript; an HTML one "^[[1]](#fn1)^"), and a Word note ended with a link
# back, "[↑](#footnote-ref-1)". The reference is written as the mark the reader sees, "^1^" (as any
# superscript is), and the link back goes: neither target is a word of the contract.
_FOOTNOTE_REFERENCE = re.compile(r"\^+\[\[([^\[\]\s]{1,12})\]\]\(#[^\s()]*\)\^+")
_FOOTNOTE_BACKLINK = re.compile(r" ?\[↑\]\(#[^\s()]*\)")
_LETTER_OR_DIGIT = re.compile(r"[^\W_]")
_PAGE_SENTINEL = "\ue000"  # private-use character standing in for "\f" while MarkItDown runs
# Word's HTML wraps list labels in "downlevel-revealed" conditionals (<![if !supportLists]> ... <![endif]>);
# the parser keeps the markers as text, glued to the clause number. The label between them stays.
_WORD_CONDITIONAL = re.compile(r"<!\[\s*(?:if\b[^\]>]*|endif\s*)\]>", re.I)
_SLIDE_MARKER = re.compile(r"<!-- Slide number: (\d+) -->[ \t]*\n?")
# Real tag syntax, as CommonMark defines raw HTML, but never across a line: a name, then attributes
# (name, optional =value), then ">". "<Base Fee plus 2%" with no ">" on its line is text, not a tag.
_TAG_ATTR = r"""[ \t]+[A-Za-z_:][-A-Za-z0-9_.:]*(?:[ \t]*=[ \t]*(?:"[^"\n]*"|'[^'\n]*'|[^\s"'=<>`]+))?"""
_TAG = re.compile(rf"<(/?)([A-Za-z][A-Za-z0-9-]*)((?:{_TAG_ATTR})*)[ \t]*/?>")
_EXEC_BLOCK = re.compile(
    rf"<(script|style|iframe|object|embed|noscript|template)\b(?:{_TAG_ATTR})*[ \t]*>.*?</\1[ \t]*>",
    re.I | re.S,
)
_RISKY_TAG_NAMES = frozenset(
    [
        "script",
        "style",
        "iframe",
        "object",
        "embed",
        "noscript",
        "template",
        "link",
        "meta",
        "base",
        "form",
        "input",
        "button",
        "svg",
        "math",
    ]
)
_SCRIPT_ATTR = re.compile(r"""[ \t]on\w+[ \t]*=|javascript:|vbscript:""", re.I)
_RISKY_LINK = re.compile(r"\]\([ \t]*(?:javascript|vbscript|data):[^)\n]*\)", re.I)


@dataclass
class Converted:
    """A converted document: text with ``"\\f"`` page breaks and the page table over it."""

    text: str
    pages: list[PageSpan]
    pages_estimated: bool
    kind: str  # pdf | docx | xlsx | pptx | epub | html | markdown | text
    warnings: list[str] = field(default_factory=list)  # things a reviewer should know
    ocr: dict[int, OcrPage] = field(default_factory=dict)  # the pages read by OCR, by number


class _SniffedMarkItDown(MarkItDown):
    """MarkItDown that trusts the stream info we pass.

    By the time MarkItDown sees a file, :func:`ingest.sniff.sniff_kind` has identified it
    from its bytes; MarkItDown's own guess (a Magika model run per file, about a fifth of
    the time of converting a 25-page PDF) would only repeat that. Overrides a private
    method of markitdown 0.1.8 (pinned in pyproject.toml); if it goes away, MarkItDown
    simply guesses again.
    """

    def _get_stream_info_guesses(self, file_stream, base_guess):  # noqa: D102 (see class doc)
        if base_guess is not None and base_guess.extension:
            return [base_guess]
        return super()._get_stream_info_guesses(file_stream=file_stream, base_guess=base_guess)


_markitdown: MarkItDown | None = None


def markitdown_instance() -> MarkItDown:
    """The MarkItDown instance used for every conversion (built once per process)."""
    global _markitdown
    if _markitdown is None:
        md = _SniffedMarkItDown(enable_builtins=False, enable_plugins=False)
        md.register_converter(PlainTextConverter(), priority=PRIORITY_GENERIC_FILE_FORMAT)
        md.register_converter(WholeHtmlConverter(), priority=PRIORITY_GENERIC_FILE_FORMAT)
        for converter in (DocxTablesConverter(), PptxTablesConverter(), EpubChaptersConverter(decode_html)):
            md.register_converter(converter)
        md.register_converter(PageAwarePdfConverter())  # the only PDF converter registered
        _markitdown = md
    return _markitdown


def convert_file(
    path: Path,
    *,
    filename: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    ocr: OcrOptions | None = None,
    on_ocr_page: PageDone | None = None,
    layout: Layout | None = None,
) -> Converted:
    """Convert the file at ``path``; ``filename`` is the name it was uploaded under. The pages of a PDF
    without a usable text layer are read by OCR with ``ocr`` (default :class:`OcrOptions`), ``on_ocr_page``
    told of each page read. A DOCX, EPUB or HTML file has the pages ``layout`` (LibreOffice) lays it out
    on, found in our text; without it, or when it fails (said in ``warnings``), pages estimated from length.

    Raises :class:`ConversionError` (``empty``, ``too_large``, ``type_mismatch``,
    ``unsupported``, ``zip_bomb``, ``corrupt``, ``encrypted``, ``needs_ocr``, ``ocr_language``,
    ``ocr_failed``).
    """
    path = Path(path)
    name = filename or path.name
    size = path.stat().st_size
    if size == 0:
        raise ConversionError("empty", "This file is empty.")
    if size > max_bytes:
        raise ConversionError(
            "too_large",
            f"This file is {size / 1048576:.1f} MB; the limit is {max_bytes / 1048576:.0f} MB. "
            "Split it or compress its images.",
        )
    data = path.read_bytes()
    kind = sniff_kind(data, name)
    if kind in ZIP_KINDS:
        check_zip_safety(data)
    if kind in TEXT_KINDS:
        return _convert_textual(data, kind, layout)
    if kind == "xlsx":
        return _finish(_read_sheets(data), False, kind, [])
    warnings: list[str] = []
    original = data
    if kind == "docx":
        prepared = prepare_docx(data)
        data, warnings = prepared.data, prepared.warnings
    elif kind == "pptx":
        data = prepare_pptx(data)
    result = _run_markitdown(data, kind)
    read: dict[int, OcrPage] = {}
    if kind == "pdf":
        assert isinstance(result, PagedConverterResult)
        page_texts, estimated = list(result.page_texts), False
        read = _ocr(data, result, page_texts, ocr or OcrOptions(), on_ocr_page)
        if read:
            warnings.append(_ocr_note(read))
    else:
        markdown = _tidy(result.markdown, raw_html=False)
        if kind == "pptx":
            page_texts, estimated = [unescape(page) for page in _slide_pages(markdown)], False
        else:
            page_texts, estimated = _pages_of(markdown, original, kind, layout, warnings)
    converted = _finish(page_texts, estimated, kind, warnings)
    converted.ocr = read
    return converted


def _ocr(
    data: bytes, result: PagedConverterResult, page_texts: list[str], options: OcrOptions, on_page
) -> dict[int, OcrPage]:
    """Read the PDF's pages without a usable text layer by OCR, and put their text in ``page_texts``. A page
    with a little text and an image (a logo and a heading) keeps its layer unless OCR reads more there.
    Returns the pages whose OCR text was kept, by number."""
    if not result.scanned_pages:
        return {}
    pdf = open_with_forms(data)  # opened by the converter a moment ago: it opens
    try:
        pages = read_pages(
            pdf, [n - 1 for n in result.scanned_pages], options, on_page=on_page, load=load_page
        )
    finally:
        pdf.close()
    junk = set(result.junk_pages)
    kept: dict[int, OcrPage] = {}
    for index, page in sorted(pages.items()):
        number = index + 1
        layer = page_texts[index]
        if number in junk or _visible(page.text) > max(_visible(layer), MIN_TEXT_CHARS_PER_PAGE - 1):
            page_texts[index] = page.text
            kept[number] = page
    return kept


def _visible(text: str) -> int:
    return sum(not ch.isspace() for ch in text)


def _ocr_note(read: dict[int, OcrPage]) -> str:
    """What the stage detail says of the pages OCR read: how many, their mean confidence, the low ones."""
    mean = sum(p.confidence for p in read.values()) / len(read)
    low = [n for n, p in read.items() if p.low]
    note = f"{len(read)} page(s) read by OCR, mean confidence {mean:.0f}%"
    if low:
        note += (
            "; low confidence on page(s) " + ", ".join(map(str, low[:20])) + ("…" if len(low) > 20 else "")
        )
    return note


def _pages_of(
    markdown: str, original: bytes, kind: str, layout: Layout | None, warnings: list[str]
) -> tuple[list[str], bool]:
    """The pages of a page-less text: LibreOffice's, found in it (``ingest.office_boxes.page_starts``), when
    ``layout`` lays the original out; else estimated from its length (``pages_estimated``)."""
    if layout is not None and kind in OFFICE_KINDS:
        try:
            pdf_data = layout(original, kind)
            with PDFIUM_LOCK:
                pdf = pdfium.PdfDocument(pdf_data)
                try:
                    layer = read_layer(pdf)
                finally:
                    pdf.close()
        except (PageImageError, pdfium.PdfiumError) as exc:
            warnings.append(f"Pages are estimated: {exc}")
        else:
            starts = page_starts(layer, fold(markdown))
            if 2 * sum(at is not None for at in starts) >= len(starts):
                return split_pages(markdown, starts), False
            # most pages' words are not in our text (a font without a text mapping): numbers would mislead
            warnings.append("Pages are estimated: LibreOffice's pages were not found in the text.")
    return estimate_pages(markdown, page_chars=ESTIMATED_PAGE_CHARS), True


def _convert_textual(data: bytes, kind: str, layout: Layout | None = None) -> Converted:
    text = decode_html(data) if kind == "html" else decode_text(data)
    if not _has_words(text):
        raise ConversionError("empty", "This file contains no text.")
    if kind == "html":
        text = _WORD_CONDITIONAL.sub("", text)
    has_page_breaks = kind != "html" and "\f" in text
    if has_page_breaks:
        text = text.replace(_PAGE_SENTINEL, " ").replace("\f", f"\n\n{_PAGE_SENTINEL}\n\n")
    result = _run_markitdown(text.encode("utf-8"), kind)
    markdown = result.markdown if kind == "text" else _tidy(result.markdown, raw_html=kind == "markdown")
    warnings = (
        [HIDDEN_TEXT_WARNING] if getattr(result, "hidden_text", False) else []
    )  # HTML (html_body.HtmlResult)
    if has_page_breaks:
        page_texts = [p.strip("\n") for p in markdown.split(_PAGE_SENTINEL)]
        if len(page_texts) > 1 and not page_texts[-1].strip():
            page_texts.pop()  # a file that ends with a page break (pdftotext writes one) has no page after it
        return _finish(page_texts, False, kind, warnings)
    return _finish(*_pages_of(markdown, data, kind, layout, warnings), kind, warnings)


def _has_words(text: str) -> bool:
    """True when ``text`` holds a letter or a digit: zero-width spaces, joiners, soft hyphens and byte-order
    marks are not whitespace to ``str.strip`` but leave nothing to review."""
    return _LETTER_OR_DIGIT.search(text) is not None


def _finish(page_texts: list[str], estimated: bool, kind: str, warnings: list[str]) -> Converted:
    text, pages = join_pages(page_texts)
    if not _has_words(text):
        raise ConversionError("empty", "This file contains no text to review.")
    return Converted(text=text, pages=pages, pages_estimated=estimated, kind=kind, warnings=warnings)


def _read_sheets(data: bytes) -> list[str]:
    try:
        return sheet_pages(data)
    except _NOT_THE_FILE:
        raise
    except Exception as exc:  # openpyxl choking on a malformed workbook
        raise ConversionError("corrupt", "This XLSX file is damaged and could not be read.") from exc


def _run_markitdown(data: bytes, kind: str):
    try:
        return markitdown_instance().convert_stream(
            io.BytesIO(data), stream_info=_STREAM_INFO[kind], **_MARKDOWNIFY
        )
    except _NOT_THE_FILE:
        raise
    except FileConversionException as exc:
        for attempt in exc.attempts or []:
            cause = attempt.exc_info[1] if attempt.exc_info else None
            if isinstance(cause, _NOT_THE_FILE):
                raise cause from None
        raise ConversionError(
            "corrupt", f"This {kind.upper()} file is damaged and could not be read."
        ) from exc
    except MarkItDownException as exc:
        raise ConversionError("unsupported", f"This {kind.upper()} file could not be converted.") from exc
    except Exception as exc:  # a library choking on malformed input
        raise ConversionError(
            "corrupt", f"This {kind.upper()} file is damaged and could not be read."
        ) from exc


def _tidy(markdown: str, *, raw_html: bool) -> str:
    """Converted Markdown made safe (:func:`_neutralise_markup`), superscript ordinals written plainly, and
    (in what a converter wrote, not in a Markdown file's own text) footnote references as their marks."""
    markdown = _SUPERSCRIPT_ORDINAL.sub(r"\1", _neutralise_markup(markdown, raw_html=raw_html))
    if not raw_html:
        markdown = _FOOTNOTE_BACKLINK.sub("", _FOOTNOTE_REFERENCE.sub(r"^\1^", markdown))
    return markdown


def _neutralise_markup(markdown: str, *, raw_html: bool) -> str:
    """Drop executable markup a converter let through (scripts, event handlers, js: links),
    never a word of the document.

    Only Markdown passes raw HTML through (``raw_html``): there, real tags (see :data:`_TAG`) that
    can run or load something are removed, their inner text kept. A risky tag name whose only
    "attributes" are bare words (``<Base Fee>``, ``<Form of Notice>``) is a defined term in angle
    brackets, not markup, and stays; so does anything with a line break before its ``>``. The
    other formats go through a DOM first (markdownify, or python-pptx text): every ``<`` in their
    output is the document's own text and is kept. Links to ``javascript:``/``data:`` URLs are
    made inert in every format. Display escapes all document text anyway
    (:mod:`reviewer.source`); this keeps the stored text itself inert.
    """
    if raw_html:
        markdown = _EXEC_BLOCK.sub("", markdown)
        markdown = _TAG.sub(_drop_risky_tag, markdown)
    return _RISKY_LINK.sub("](#)", markdown)


def _drop_risky_tag(m: re.Match) -> str:
    closing, name, attrs = m.groups()
    if _SCRIPT_ATTR.search(attrs):
        return ""
    if name.lower() in _RISKY_TAG_NAMES and (closing or not attrs.strip() or "=" in attrs):
        return ""
    return m.group(0)


def _slide_pages(markdown: str) -> list[str]:
    """Page N = slide N, from MarkItDown's slide markers.

    Slide text cannot forge a marker (:mod:`ingest.pptx_prep` escapes it before MarkItDown runs);
    even so, only a marker carrying the next slide number counts, so no text can move words to
    another page or ask for millions of pages. Any other marker-like text stays where it is.
    """
    marks: list[re.Match[str]] = []
    for m in _SLIDE_MARKER.finditer(markdown):
        if int(m.group(1)) == len(marks) + 1:
            marks.append(m)
    if not marks:
        return [markdown]
    pages = [
        markdown[m.end() : (marks[k + 1].start() if k + 1 < len(marks) else len(markdown))].strip("\n")
        for k, m in enumerate(marks)
    ]
    preamble = markdown[: marks[0].start()]
    if preamble.strip():
        pages[0] = preamble.strip("\n") + "\n\n" + pages[0]
    return pages
