"""What the review page shows of a PDF original: its pages drawn as images, the glyph boxes of a
cited span over them, and the page labels the PDF prints.

All of it is computed on demand in the web process and kept: images as files under
``MEDIA_ROOT/var/page-images`` (bounded, least recently used first out: ``ingest.disk_cache``),
boxes and labels in the cache (Redis), keyed by the document's content. An image is drawn at one of
a few widths (what the viewer asks for at its usual sizes, and one for zooming), within a pixel
budget, so a poster-sized page costs no more than a letter page. pdfium is not thread-safe: every
call holds ``PDFIUM_LOCK``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pypdfium2 as pdfium
from django.conf import settings
from django.db.models import F
from django.db.models.functions import Substr

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


def has_page_images(document: Document) -> bool:
    """Whether the document's original is a PDF we keep (its pages can be shown as drawn)."""
    return document.kind == "pdf" and bool(document.file.name)


def image_etag(document: Document, number: int, width: int) -> str:
    return f'"{document.sha256[:16]}-{number}-{width}-r{RENDER_VERSION}"'


def page_image(document: Document, number: int, width: int) -> Path:
    """The PNG of physical page ``number`` drawn ``width`` pixels wide (one of ``IMAGE_WIDTHS``), from
    the folder or drawn now. Raises ``PageImageError``."""
    if width not in IMAGE_WIDTHS:
        raise ValueError(f"width {width} is not one of {IMAGE_WIDTHS}")
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
    their own number are left out. Empty when the PDF has none or cannot be read."""
    if not has_page_images(document):
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


_caches: dict[tuple[str, int], BoundedDirCache] = {}


def image_cache() -> BoundedDirCache:
    root = Path(settings.MEDIA_ROOT) / "var" / "page-images"
    bound = int(getattr(settings, "PAGE_IMAGE_CACHE_BYTES", IMAGE_CACHE_BYTES))
    found = _caches.get((str(root), bound))
    if found is None:
        found = _caches[(str(root), bound)] = BoundedDirCache(root, bound)
    return found


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
