"""Upload (admins): several files at once, a ZIP of them, or URLs; each file is checked (type, size) by
ingest before it is queued, each member of a ZIP is a file of its own, and each URL is fetched by a worker
(the document shows "fetching", then goes on like an upload)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.shortcuts import render

from config.uploads import too_many_files, too_many_files_message
from extraction.engines import resolve_engine_name
from extraction.launch import extract_after_ingest, extract_on_upload
from ingest.archive import intake_archive, is_archive
from ingest.doctype import type_choices
from ingest.intake import IntakeError, intake_file
from ingest.models import Document
from ingest.url_intake import intake_url
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
    # more files than one upload takes: none was read (config.uploads); the form says the limit
    refused = too_many_files_message() if too_many_files(request) else ""
    if request.method == "POST":
        if refused:
            form, status = UploadForm(), 422
        elif form.is_valid():
            data = form.cleaned_data
            asked = (data["doc_type"], request.user, data["extract"])
            for uploaded in data["files"]:
                if is_archive(uploaded):
                    results.extend(_archive(engagement, uploaded, *asked))
                else:
                    results.append(_intake(engagement, uploaded, *asked))
            results.extend(_intake_url(engagement, url, *asked) for url in data["urls"])
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
        "announce": refused or summary(results),
        "refused": refused,
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
    return _described(name, result, user, extract)


def _archive(engagement, uploaded, doc_type: str, user, extract: bool) -> list[FileResult]:
    """A ZIP of contracts: a line for each file in it (taken or refused), or one for the archive refused."""
    then = extract_after_ingest(user.pk) if extract else None
    try:
        entries = intake_archive(
            engagement, uploaded, filename=uploaded.name, uploaded_by=user, doc_type=doc_type, then=then
        )
    except IntakeError as exc:
        return [FileResult(uploaded.name, False, str(exc))]
    return [
        _described(f"{uploaded.name} › {e.path}", e.result, user, extract)
        if e.result is not None
        else FileResult(f"{uploaded.name} › {e.path}", False, str(e.error))
        for e in entries
    ]


def _intake_url(engagement, url: str, doc_type: str, user, extract: bool) -> FileResult:
    then = extract_after_ingest(user.pk) if extract else None
    try:
        result = intake_url(engagement, url, uploaded_by=user, doc_type=doc_type, then=then)
    except IntakeError as exc:
        return FileResult(url, False, str(exc))
    document = result.document
    document.refresh_from_db(fields=["status", "error", "error_code"])  # the queue answered on commit
    if document.error_code == "not_queued":
        return FileResult(url, False, f"Not fetched: {document.error}", document)
    after = "; its clauses will be extracted when it is ready" if extract else ""
    if result.created:
        return FileResult(
            url, True, f"Fetching; processed like an upload once its file is in{after}.", document
        )
    if document.status == Document.Status.FETCHING:
        verb = "Fetching it again" if result.retried else "Already being fetched"
        return FileResult(url, True, f"{verb}{after}.", document)
    if result.retried:
        return FileResult(
            url,
            True,
            f"Fetched before, where processing failed on our side; processing it again{after}.",
            document,
        )
    return FileResult(url, False, f"Fetched before as “{document.title}” ({document.status}).", document)


def _described(name: str, result, user, extract: bool) -> FileResult:
    """What the upload page says of a file taken in (new, the same bytes as before, retried...)."""
    result.document.refresh_from_db(fields=["status", "error", "error_code"])  # the queue answered on commit
    if result.document.error_code == "not_queued":
        return FileResult(name, False, f"Saved, but not queued: {result.document.error}", result.document)
    if result.created:
        after = "; its clauses will be extracted when it is ready" if extract else ""
        return FileResult(name, True, f"Queued for processing{after}.", result.document)
    if result.unsent:
        return FileResult(
            name,
            True,
            f"Uploaded before as “{result.document.title}”, whose processing never started; starting it now.",
            result.document,
        )
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
