"""Upload (admins): several files at once; each is checked (type, size) by ingest before it is queued."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.shortcuts import render

from extraction.engines import resolve_engine_name
from extraction.launch import extract_after_ingest, extract_on_upload
from ingest.doctype import type_choices
from ingest.intake import IntakeError, intake_file
from reviewer import access, clauses
from reviewer.forms import UploadForm
from reviewer.views.engagements import _documents


@dataclass
class FileResult:
    filename: str
    ok: bool
    message: str
    document: object = None


def upload(request, engagement_id: int):
    engagement = access.engagement_for(request.user, engagement_id, access.MANAGE_ROLES)
    results: list[FileResult] = []
    status = 200
    form = UploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            results = [
                _intake(engagement, f, data["doc_type"], request.user, data["extract"]) for f in data["files"]
            ]
            if not any(r.ok for r in results):
                status = 422
            form = UploadForm()
        else:
            status = 422
    documents = _documents(engagement)
    role = engagement.my_role  # type: ignore[attr-defined]  # annotated by reviewer.access
    context = {
        "engagement": engagement,
        "role": role,
        "form": form,
        "results": results,
        "documents": documents,
        "polling": clauses.still_working(documents),
        "doc_types": type_choices(engagement),
        "engine": resolve_engine_name(),
        "max_files": settings.DATA_UPLOAD_MAX_NUMBER_FILES,
        "announce": summary(results),
    }
    template = (
        "reviewer/_upload_results.html"
        if request.headers.get("HX-Request") == "true"
        else "reviewer/upload.html"
    )
    return render(request, template, context, status=status)


def summary(results: list[FileResult]) -> str:
    """The line a screen reader reads out after an upload (the list of results is not read out whole)."""
    if not results:
        return ""
    taken = sum(r.ok for r in results)
    refused = len(results) - taken
    files = "file" if len(results) == 1 else "files"
    return (
        f"{taken} of {len(results)} {files} taken{f', {refused} refused' if refused else ''}: "
        "the results are listed below."
    )


def _intake(engagement, uploaded, doc_type: str, user, extract: bool) -> FileResult:
    name = uploaded.name
    then = extract_after_ingest(user.pk) if extract else None
    try:
        result = intake_file(
            engagement, uploaded, filename=name, uploaded_by=user, doc_type=doc_type, then=then
        )
    except IntakeError as exc:
        return FileResult(name, False, str(exc))
    result.document.refresh_from_db(fields=["status", "error", "error_code"])  # the queue answered on commit
    if result.document.error_code == "not_queued":
        return FileResult(name, False, f"Saved, but not queued: {result.document.error}", result.document)
    if result.created:
        after = "; its clauses will be extracted when it is ready" if extract else ""
        return FileResult(name, True, f"Queued for processing{after}.", result.document)
    if result.retried:
        return FileResult(
            name,
            True,
            f"Uploaded before as “{result.document.title}”, where processing failed "
            "on our side; processing it again.",
            result.document,
        )
    if result.document.status == "failed":
        return FileResult(
            name,
            False,
            f"Uploaded before as “{result.document.title}” and refused: {result.document.error}",
            result.document,
        )
    said = f"Already uploaded (same content) as “{result.document.title}”"
    note = extract_on_upload(result.document, user_id=user.pk) if extract else ""
    if note:
        said += f"; {note}"
    return FileResult(name, True, f"{said}.", result.document)
