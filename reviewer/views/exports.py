"""Exports of a document, a whole engagement or one extraction run (CSV, JSON, XLSX), scoped like every page.

CSV and JSON stream as they are read from the database; XLSX is written into a temporary file first (a
zip cannot be sent before it is finished) and sent from it. Neither holds the engagement in memory.
The answers to free questions asked with Find a clause are not clauses: an export leaves them out unless
asked for them (``?questions=1``).
"""

from __future__ import annotations

import tempfile

from django.db.models import QuerySet
from django.http import FileResponse, Http404, StreamingHttpResponse
from django.utils import timezone
from django.utils.text import slugify

from engagements.scoping import get_scoped_or_404
from extraction.models import Extraction, ExtractionRun, questions
from reviewer import access, exports


def with_questions(request) -> bool:
    """Whether the export was asked to hold the answers to free questions too (``?questions=1``)."""
    return request.GET.get("questions") == "1"


def _response(fmt: str, extractions: QuerySet, stem: str, *, asked: bool = False, **meta):
    """``asked``: the answers to free questions too, else the clauses alone."""
    if fmt not in exports.CONTENT_TYPES:
        raise Http404("Unknown export format.")
    if not asked:
        extractions = extractions.exclude(questions("clause_type"))
    meta["questions_included"] = asked
    filename = f"{slugify(stem) or 'export'}{'-with-questions' if asked else ''}.{fmt}"
    records = exports.iter_records(exports.load(extractions))
    if fmt == "xlsx":
        file = tempfile.TemporaryFile()  # closed (and so removed) by the response once sent
        exports.write_xlsx(records, file)
        file.seek(0)
        response: StreamingHttpResponse = FileResponse(
            file, as_attachment=True, filename=filename, content_type=exports.CONTENT_TYPES[fmt]
        )
    else:
        chunks = (
            exports.csv_chunks(records)
            if fmt == "csv"
            else exports.json_chunks(records, exported_at=timezone.now().isoformat(), **meta)
        )
        response = StreamingHttpResponse(chunks, content_type=exports.CONTENT_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["Cache-Control"] = "private, no-store"
    return response


def document_export(request, document_id: int, fmt: str):
    doc = access.document_for(request.user, document_id)
    return _response(
        fmt,
        Extraction.objects.filter(document_id=doc.pk),
        f"{doc.title}-clauses",
        asked=with_questions(request),
        document={"id": doc.pk, "title": doc.title},
    )


def run_export(request, run_id: int, fmt: str):
    """The clauses one extraction run found (a night's bulk run, say), without the other runs' answers."""
    run = get_scoped_or_404(ExtractionRun.objects.select_related("engagement"), request.user, pk=run_id)
    return _response(
        fmt,
        Extraction.objects.filter(run_id=run.pk),
        f"{run.engagement.name}-run-{run.pk}-clauses",
        asked=with_questions(request),
        run={
            "id": run.pk,
            "engagement": {"id": run.engagement_id, "name": run.engagement.name},
            "engine": run.engine,
            "model": run.model,
            "started_at": run.created_at.isoformat(),
        },
    )


def engagement_export(request, engagement_id: int, fmt: str):
    engagement = access.engagement_for(request.user, engagement_id)
    return _response(
        fmt,
        Extraction.objects.filter(document__engagement_id=engagement.pk),
        f"{engagement.name}-clauses",
        asked=with_questions(request),
        engagement={"id": engagement.pk, "name": engagement.name},
    )
