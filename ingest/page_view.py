"""What the review page shows of a PDF original: its pages drawn as images, the glyph boxes of a
cited span over them, and the page labels the PDF prints. An office original (DOCX, PPTX, XLSX, EPUB,
HTML) is shown the same way through the PDF LibreOffice lays out of it (``ingest.office_pdf``, made
once per content and kept beside the images); a page of ours is drawn as the LibreOffice page its part
of the quote is found on, or without a quote, the one its text starts on (``ingest.office_boxes``).

All of it is computed on demand in the web process and kept: images as files under
``MEDIA_ROOT/var/page-images`` (bounded, least recently used first out: ``ingest.disk_cache``),
boxes and labels in the cache (Redis), keyed by the document's content. An image is drawn at one of
a few widths (what the viewer asks for at its usual sizes, and one for zooming), within a pixel
budget, so a poster-sized page costs no more than a letter page. pdfium is not thread-safe: every
call holds ``PDFIUM_LOCK``.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path

import pypdfium2 as pdfium
from django.conf import settings
from django.db.models import F
from django.db.models.functions import Substr

from ingest import office_boxes, office_pdf
from ingest.disk_cache import BoundedDirCache
from ingest.memo import kept
from ingest.models import Document, Page
from ingest.pdf_boxes import PageSlice, span_boxes
from ingest.pdf_pages import PDFIUM_LOCK, open_with_forms
from ingest.pdf_render import PageImageError, render_png

VIEW_WIDTHS = (800, 1200)  # pixels: the viewer's page at its usual size, and on a 1.5x screen
ZOOM_WIDTH = 2000  # pixels: zoomed in, or a 2x screen
IMAGE_WIDTHS = (*VIEW_WIDTHS, ZOOM_WIDTH)
RENDER_VERSION = 1  # part of an image's name and ETag: a change in drawing makes new files
BOXES_VERSION = 1  # part of the boxes' key: a change in mapping computes them again
KEEP_SECONDS = 30 * 24 * 3600  # boxes and labels of a document's content never change
IMAGE_CACHE_BYTES = 1 << 30  # default bound of the image folder (settings.PAGE_IMAGE_CACHE_BYTES)
OFFICE_PDF_CACHE_BYTES = 256 << 20  # default bound of LibreOffice's PDFs (settings.OFFICE_PDF_CACHE_BYTES)
OFFICE_BOXES_VERSION = 2  # part of an office span's key: a change in locating quotes computes it again
LAYERS_KEPT = 8  # folded texts of this many documents (ours and LibreOffice's) kept in each process


def has_page_images(document: Document) -> bool:
    """Whether the document's pages can be shown as drawn: a PDF we keep, or an office original we keep
    where LibreOffice is installed (without it, its pages stay estimated, as text)."""
    if not document.file.name:
        return False
    if document.kind == "pdf":
        return True
    return is_office(document) and office_pdf.soffice() is not None


def is_office(document: Document) -> bool:
    """Whether the document's original is laid out by LibreOffice to be shown as pages."""
    return document.kind in office_pdf.OFFICE_KINDS


def office_made() -> str:
    """Part of every key kept of an office original's pages: how LibreOffice laid it out and how quotes
    are located on it. A change in either makes the page images, boxes and page indexes again."""
    return f"lo{office_pdf.CONVERT_VERSION}-o{OFFICE_BOXES_VERSION}"


def image_etag(document: Document, number: int, width: int) -> str:
    if is_office(document):  # which LibreOffice page shows ours follows our text too
        return f'"{document_version(document)}-{number}-{width}-r{RENDER_VERSION}-{office_made()}"'
    return f'"{document.sha256[:16]}-{number}-{width}-r{RENDER_VERSION}"'


def page_image(document: Document, number: int, width: int, span: tuple[int, int] | None = None) -> Path:
    """The PNG of physical page ``number`` drawn ``width`` pixels wide (one of ``IMAGE_WIDTHS``), from
    the folder or drawn now; of an office original, the LibreOffice page that shows our page ``number``
    (where the quote ``span`` is found on it, when given). Raises ``PageImageError``."""
    if width not in IMAGE_WIDTHS:
        raise ValueError(f"width {width} is not one of {IMAGE_WIDTHS}")
    if is_office(document):
        return _office_image(document, number, width, span)
    key = f"{document.pk}/{document.sha256[:16]}-r{RENDER_VERSION}-p{number}-w{width}.png"
    images = image_cache()
    path = images.get(key)
    if path is not None:
        return path
    with PDFIUM_LOCK:
        path = images.get(key)  # drawn by another thread meanwhile
        if path is not None:
            return path
        pdf = _open(document)
        try:
            data = render_png(pdf, number - 1, width)
        finally:
            pdf.close()
    return images.put(key, data)


def span_boxes_json(document: Document, start: int, end: int) -> dict:
    """The frames of the pages the span ``[start, end)`` touches and its glyph rectangles
    (``ingest.pdf_boxes``), as JSON-ready data; computed once, then from the cache (keyed by the document's
    content and last change: a document converted again gets new boxes). Raises ``PageImageError`` when the
    original cannot be read."""
    if is_office(document):
        key = f"officeboxes:{office_made()}-{BOXES_VERSION}:{document_version(document)}:{start}:{end}"
        return kept(key, lambda: _office_span(document, start, end), KEEP_SECONDS)
    key = f"pdfboxes:v{BOXES_VERSION}:{document_version(document)}:{start}:{end}"
    return kept(key, lambda: _span_boxes(document, start, end), KEEP_SECONDS)


def _span_boxes(document: Document, start: int, end: int) -> dict:
    rows = (
        Page.objects.filter(document=document, char_start__lt=max(end, start + 1), char_end__gt=start)
        .annotate(body=Substr("document__text", F("char_start") + 1, F("char_end") - F("char_start")))
        .order_by("number")
        .values_list("number", "char_start", "body", "ocr_words")
    )
    pages = [PageSlice(n, s, body or "", words) for n, s, body, words in rows]  # words: a page read by OCR
    with PDFIUM_LOCK:
        pdf = _open(document)
        try:
            frames, boxes = span_boxes(pdf, start, end, pages)
        except pdfium.PdfiumError as exc:
            raise PageImageError("The original PDF cannot be read for this quote.") from exc
        finally:
            pdf.close()
    return {"pages": [f.as_json() for f in frames], "boxes": [b.as_json() for b in boxes]}


def document_version(document: Document) -> str:
    """The document's id, content and last change, in one token (cache keys, ETags)."""
    return f"{document.pk}-{document.sha256[:16]}-{int(document.updated_at.timestamp())}"


def page_labels(document: Document) -> dict[int, str]:
    """The page labels the PDF defines ("iii", "A-2"), by physical page number; pages whose label is
    their own number are left out. Empty when the PDF has none or cannot be read, and for an office
    original (LibreOffice's PDF labels nothing, and reading it would wait for its conversion)."""
    if document.kind != "pdf" or not has_page_images(document):
        return {}
    return kept(
        f"pagelabels:v1:{document.pk}:{document.sha256[:16]}", lambda: _labels(document), KEEP_SECONDS
    )


def _labels(document: Document) -> dict[int, str]:
    labels: dict[int, str] = {}
    with PDFIUM_LOCK:
        try:
            pdf = _open(document, forms=False)
        except PageImageError:
            return labels
        try:
            for i in range(len(pdf)):
                label = pdf.get_page_label(i)
                if label and label != str(i + 1):
                    labels[i + 1] = label
        finally:
            pdf.close()
    return labels


def remove_page_images(document_id: int) -> None:
    """Remove the drawn pages of a document (it was deleted: its pages leave the disk with it)."""
    image_cache().remove_folder(str(document_id))
    office_cache().remove_folder(str(document_id))


_caches: dict[tuple[str, int], BoundedDirCache] = {}


def image_cache() -> BoundedDirCache:
    root = Path(settings.MEDIA_ROOT) / "var" / "page-images"
    bound = int(getattr(settings, "PAGE_IMAGE_CACHE_BYTES", IMAGE_CACHE_BYTES))
    found = _caches.get((str(root), bound))
    if found is None:
        found = _caches[(str(root), bound)] = BoundedDirCache(root, bound)
    return found


def office_cache() -> BoundedDirCache:
    root = Path(settings.MEDIA_ROOT) / "var" / "office-pdfs"
    bound = int(getattr(settings, "OFFICE_PDF_CACHE_BYTES", OFFICE_PDF_CACHE_BYTES))
    found = _caches.get((str(root), bound))
    if found is None:
        found = _caches[(str(root), bound)] = BoundedDirCache(root, bound)
    return found


def profiles_dir() -> Path:
    """Where LibreOffice's private profiles live (``settings.LIBREOFFICE_PROFILES``, else ``var/``)."""
    default = Path(settings.BASE_DIR) / "var" / "libreoffice"
    return Path(getattr(settings, "LIBREOFFICE_PROFILES", default))


def office_pdf_path(document: Document, kind: str | None = None) -> Path:
    """The PDF LibreOffice laid out of the document's original (of ``kind``: the converter names it before
    the document row does): kept, or made now (seconds; one run per content, a failure kept too). Raises
    ``PageImageError`` (``office_pdf.OfficeConversionError``)."""
    key = f"{document.pk}/{document.sha256[:16]}-lo{office_pdf.CONVERT_VERSION}.pdf"
    return office_pdf.kept_or_converted(
        office_cache(), key, lambda: _original_bytes(document), kind or document.kind, profiles_dir()
    )


def office_page_index(document: Document, number: int, span: tuple[int, int] | None = None) -> int:
    """The 0-based LibreOffice page that shows our page ``number``: where the quote ``span`` is found on
    it, else where its text starts."""
    if span is not None:
        for frame in span_boxes_json(document, *span)["pages"]:
            if frame["number"] == number:
                return frame["pdf_page"] - 1
    key = f"officepage:{office_made()}:{document_version(document)}:{number}"
    return kept(key, lambda: _office_page(document, number), KEEP_SECONDS)


def _office_page(document: Document, number: int) -> int:
    row = Page.objects.filter(document=document, number=number).values_list("char_start", "char_end").first()
    layer, ours = _office_texts(document)
    if row is None:
        return 0
    return office_boxes.page_for(layer, ours, office_boxes.OurPage(number, *row))


def _office_image(document: Document, number: int, width: int, span: tuple[int, int] | None) -> Path:
    index = office_page_index(document, number, span)
    made = f"lo{office_pdf.CONVERT_VERSION}-r{RENDER_VERSION}"
    key = f"{document.pk}/{document.sha256[:16]}-{made}-p{index + 1}-w{width}.png"
    images = image_cache()
    path = images.get(key)
    if path is not None:
        return path
    source = office_pdf_path(document)
    with PDFIUM_LOCK:
        path = images.get(key)
        if path is not None:
            return path
        pdf = _open_pdf(source)
        try:
            data = render_png(pdf, index, width)
        finally:
            pdf.close()
    return images.put(key, data)


def _office_span(document: Document, start: int, end: int) -> dict:
    rows = (
        Page.objects.filter(document=document, char_start__lt=max(end, start + 1), char_end__gt=start)
        .order_by("number")
        .values_list("number", "char_start", "char_end")
    )
    pages = [office_boxes.OurPage(*row) for row in rows]
    layer, ours = _office_texts(document)
    source = office_pdf_path(document)
    with PDFIUM_LOCK:
        pdf = _open_pdf(source)
        try:
            data = office_boxes.span_json(pdf, layer, ours, start, end, pages)
        except pdfium.PdfiumError as exc:
            raise PageImageError("LibreOffice's PDF of the original cannot be read for this quote.") from exc
        finally:
            pdf.close()
    return {**data, "laid_out_by": "LibreOffice"}


_layers: OrderedDict[str, tuple[office_boxes.Layer, office_boxes.Folded]] = OrderedDict()
_layers_lock = threading.Lock()


def _office_texts(document: Document) -> tuple[office_boxes.Layer, office_boxes.Folded]:
    """LibreOffice's text layer and our text of the document, folded (``ingest.office_boxes``); kept in
    the process for the last ``LAYERS_KEPT`` documents (a reviewer steps through one document's quotes)."""
    key = f"{document_version(document)}-lo{office_pdf.CONVERT_VERSION}"
    with _layers_lock:
        found = _layers.get(key)
        if found is not None:
            _layers.move_to_end(key)
            return found
    source = office_pdf_path(document)
    text = Document.objects.filter(pk=document.pk).values_list("text", flat=True).first() or ""
    ours = office_boxes.fold(text)
    with PDFIUM_LOCK:
        pdf = _open_pdf(source)
        try:
            layer = office_boxes.read_layer(pdf)
        except pdfium.PdfiumError as exc:
            raise PageImageError("LibreOffice's PDF of the original cannot be read.") from exc
        finally:
            pdf.close()
    with _layers_lock:
        _layers[key] = (layer, ours)
        while len(_layers) > LAYERS_KEPT:
            _layers.popitem(last=False)
    return layer, ours


def _open_pdf(path: Path) -> pdfium.PdfDocument:
    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        raise PageImageError("LibreOffice's PDF of the original cannot be opened.") from exc


def _original_bytes(document: Document) -> bytes:
    try:
        with document.file.open("rb") as handle:
            return handle.read()
    except (OSError, ValueError) as exc:
        raise PageImageError("The original file is missing.") from exc


def _open(document: Document, *, forms: bool = True) -> pdfium.PdfDocument:
    """The document's original PDF, opened as the converter opens it. Raises ``PageImageError``."""
    try:
        source: str | bytes = document.file.path
    except NotImplementedError:  # a storage without local paths
        try:
            with document.file.open("rb") as handle:
                source = handle.read()
        except OSError as exc:
            raise PageImageError("The original file is missing.") from exc
    if isinstance(source, str) and not os.path.exists(source):
        raise PageImageError("The original file is missing.")
    try:
        return open_with_forms(source) if forms else pdfium.PdfDocument(source)
    except pdfium.PdfiumError as exc:
        raise PageImageError("The original PDF cannot be opened.") from exc
