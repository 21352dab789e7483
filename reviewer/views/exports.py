"""Exports of a document or a whole engagement (CSV, JSON, XLSX), scoped like every page."""
from __future__ import annotations

from django.http import Http404, HttpResponse
from django.utils import timezone
from django.utils.text import slugify

from extraction.models import Extraction
from reviewer import access, exports


def _response(fmt: str, records: list[dict], stem: str, **meta) -> HttpResponse:
    if fmt not in exports.CONTENT_TYPES:
        raise Http404("Unknown export format.")
    body = exports.render(fmt, records, exported_at=timezone.now().isoformat(), **meta)
    response = HttpResponse(body, content_type=exports.CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{slugify(stem) or "export"}.{fmt}"'
    response["Cache-Control"] = "private, no-store"
    return response


def document_export(request, document_id: int, fmt: str):
    doc = access.document_for(request.user, document_id)
    records = exports.export_records(exports.load(Extraction.objects.filter(document_id=doc.pk)))
    return _response(fmt, records, f"{doc.title}-clauses", document={"id": doc.pk, "title": doc.title})


def engagement_export(request, engagement_id: int, fmt: str):
    engagement = access.engagement_for(request.user, engagement_id)
    records = exports.export_records(exports.load(Extraction.objects.filter(document__engagement_id=engagement.pk)))
    return _response(fmt, records, f"{engagement.name}-clauses",
                     engagement={"id": engagement.pk, "name": engagement.name})
