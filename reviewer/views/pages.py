"""A PDF's pages as drawn: the image of a page, the glyph boxes of a citation, the original shown inline.
An office original is shown through the PDF LibreOffice lays out of it (``ingest.page_view``): its page
image at a citation names the citation, since the LibreOffice page shown is the one the quote is found on.

Scoped like every page (a document outside the user's engagements is a 404). Images and boxes of a
document's content never change, so they carry an ETag and ``Cache-Control: private, no-cache``: the
browser keeps them, asks again each time (a member removed from the engagement gets a 404, not the
copy), and an unchanged answer is a 304 without a body.
"""

from __future__ import annotations

from django.http import FileResponse, Http404, HttpResponse, HttpResponseNotModified, JsonResponse
from django.utils.http import parse_etags

from extraction.closest import ClosestPassage
from ingest import page_view
from ingest.page_view import PageImageError
from reviewer import access
from reviewer.workspace import cited_at, clause_citations, clause_history, located_correction

CACHE_CONTROL = "private, no-cache"


def page_image(request, document_id: int, number: int, width: int):
    """The PNG of page ``number`` ``width`` pixels wide (one of ``ingest.page_view.IMAGE_WIDTHS``). A page
    that cannot be drawn answers 422 with the reason, and the viewer shows the page's text instead."""
    doc = access.document_for(request.user, document_id)
    if not page_view.has_page_images(doc) or width not in page_view.IMAGE_WIDTHS:
        raise Http404("No such page image.")
    if not 1 <= number <= doc.page_count:
        raise Http404("No such page.")
    return _image(request, doc, number, width, page_view.image_etag(doc, number, width), None)


def citation_page_image(request, document_id: int, citation_id: int, number: int, width: int):
    """The PNG of page ``number`` as the review page shows it at a citation: of an office original, the
    LibreOffice page the quote's part on page ``number`` is found on (the page its boxes are drawn over);
    of a PDF, the page itself."""
    citation = access.citation_for(request.user, document_id, citation_id)
    doc = citation.extraction.document
    if not page_view.has_page_images(doc) or width not in page_view.IMAGE_WIDTHS:
        raise Http404("No such page image.")
    if not 1 <= number <= doc.page_count:
        raise Http404("No such page.")
    if not page_view.is_office(doc):
        return _image(request, doc, number, width, page_view.image_etag(doc, number, width), None)
    etag = (
        f'"{page_view.document_version(doc)}-c{citation.pk}-{citation.start}-{citation.end}-{number}-{width}'
        f'-r{page_view.RENDER_VERSION}-o{page_view.OFFICE_BOXES_VERSION}"'
    )
    return _image(request, doc, number, width, etag, (citation.start, citation.end))


def _image(request, doc, number: int, width: int, etag: str, span: tuple[int, int] | None):
    if _fresh(request, etag):
        return _not_modified(etag)
    for _attempt in range(2):  # the file may be swept away between finding it and opening it
        try:
            path = page_view.page_image(doc, number, width, span)
            handle = open(path, "rb")  # noqa: SIM115  (FileResponse closes it)
        except PageImageError as exc:
            response = HttpResponse(str(exc), status=422, content_type="text/plain; charset=utf-8")
            response["Cache-Control"] = "private, no-store"
            return response
        except FileNotFoundError:
            continue
        return _cached(FileResponse(handle, content_type="image/png"), etag)
    raise Http404("The page image could not be kept.")


def citation_boxes(request, document_id: int, citation_id: int):
    """The rectangles of a citation's glyphs on the PDF's pages, as JSON:

    ``{"document", "citation", "start", "end", "page", "pages": [{"number", "label", "width", "height",
    "rotation"}], "boxes": [{"page", "x0", "y0", "x1", "y1", "left", "top", "right", "bottom"}]}``;
    ``x0..y1`` in PDF points (user space, y up, before /Rotate), ``left..bottom`` fractions of the page as
    shown (crop box and /Rotate applied, y down); see ``ingest.pdf_boxes``. Of an office original, the
    boxes are on the PDF LibreOffice laid out: each page also names ``pdf_page`` (its LibreOffice page shown
    as our page ``number``), ``pdf_pages`` and ``located`` (the quote's words were found there), and
    ``notes`` say what a reader should know (``ingest.office_boxes``). 404 for a document whose pages are
    not drawn; 422 (with ``error``) when its original cannot be read or laid out."""
    citation = access.citation_for(request.user, document_id, citation_id)
    return _span_boxes(
        request, citation.extraction.document, citation.pk, citation.start, citation.end, citation.page
    )


def closest_boxes(request, document_id: int, extraction_id: int):
    """The rectangles of a not_found's nearest miss (``Extraction.closest``), shaped as
    ``citation_boxes`` with ``"citation": "closest"``; 404 when the clause has none."""
    extraction = access.extraction_for(request.user, document_id, extraction_id)
    closest = ClosestPassage.of(extraction)
    if closest is None:
        raise Http404("This clause has no closest passage.")
    return _span_boxes(request, extraction.document, "closest", closest.start, closest.end, closest.page)


def correction_boxes(request, document_id: int, extraction_id: int):
    """The rectangles of where a clause's corrected text stands (``workspace.located_correction``),
    shaped as ``citation_boxes`` with ``"citation": "correction"``; 404 when it has none there."""
    extraction = access.extraction_for(request.user, document_id, extraction_id)
    citations = clause_citations(extraction)
    correction, _ = located_correction(
        extraction.document, clause_history(extraction), near=cited_at(extraction, citations)
    )
    if correction is None:
        raise Http404("This clause has no correction found in the document.")
    return _span_boxes(
        request, extraction.document, "correction", correction.start, correction.end, correction.page
    )


def _span_boxes(request, doc, key: int | str, start: int, end: int, page: int):
    if not page_view.has_page_images(doc):
        raise Http404("This document has no PDF pages.")
    version = page_view.document_version(doc)
    etag = f'"{version}-{key}-{start}-{end}-b{page_view.BOXES_VERSION}"'
    if _fresh(request, etag):
        return _not_modified(etag)
    try:
        data = page_view.span_boxes_json(doc, start, end)
    except PageImageError as exc:
        return JsonResponse({"error": str(exc)}, status=422)
    payload = {"document": doc.pk, "citation": key, "start": start, "end": end, "page": page, **data}
    return _cached(JsonResponse(payload), etag)


def original(request, document_id: int):
    """The uploaded PDF shown in the browser's own viewer (inline, not a download); the review page links
    to it with ``#page=N``, which that viewer opens at. Of an office original, the PDF LibreOffice laid out
    (the original itself is the "Original" download)."""
    doc = access.document_for(request.user, document_id)
    if not page_view.has_page_images(doc):
        raise Http404("This document is not a PDF.")
    if page_view.is_office(doc):
        try:
            path = page_view.office_pdf_path(doc)
            handle = open(path, "rb")  # noqa: SIM115  (FileResponse closes it)
        except PageImageError as exc:
            response = HttpResponse(str(exc), status=422, content_type="text/plain; charset=utf-8")
            response["Cache-Control"] = "private, no-store"
            return response
        except FileNotFoundError:
            raise Http404("The laid out PDF is missing.") from None
        name = doc.original_name.rsplit(".", 1)[0] + " (LibreOffice).pdf"
        return FileResponse(handle, content_type="application/pdf", filename=name)
    try:
        handle = doc.file.open("rb")
    except FileNotFoundError:
        raise Http404("The stored file is missing.") from None
    return FileResponse(handle, content_type="application/pdf", filename=doc.original_name)


def _fresh(request, etag: str) -> bool:
    return etag in parse_etags(request.headers.get("If-None-Match", ""))


def _not_modified(etag: str) -> HttpResponse:
    response = HttpResponseNotModified()
    return _cached(response, etag)


def _cached(response, etag: str):
    response["ETag"] = etag
    response["Cache-Control"] = CACHE_CONTROL
    return response
