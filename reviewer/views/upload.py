"""Upload (admins): several files at once; each is checked (type, size) by ingest before it is queued."""
from __future__ import annotations

from dataclasses import dataclass

from django.shortcuts import render

from reviewer import access
from reviewer.doc_types import type_choices
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
            results = [_intake(engagement, f, form.cleaned_data["doc_type"], request.user) for f in form.cleaned_data["files"]]
            if not any(r.ok for r in results):
                status = 422
            form = UploadForm()
        else:
            status = 422
    documents = _documents(engagement)
    context = {
        "engagement": engagement, "role": engagement.my_role, "form": form, "results": results,
        "documents": documents, "polling": any(not d.is_terminal for d in documents), "doc_types": type_choices(engagement),
    }
    template = "reviewer/_upload_results.html" if request.headers.get("HX-Request") == "true" else "reviewer/upload.html"
    return render(request, template, context, status=status)


def _intake(engagement, uploaded, doc_type: str, user) -> FileResult:
    from ingest.intake import IntakeError, intake_file

    name = uploaded.name
    try:
        result = intake_file(engagement, uploaded, filename=name, uploaded_by=user, doc_type=doc_type)
    except IntakeError as exc:
        return FileResult(name, False, str(exc))
    if result.created:
        return FileResult(name, True, "Queued for processing.", result.document)
    return FileResult(name, True, f"Already uploaded (same content) as “{result.document.title}”.", result.document)
