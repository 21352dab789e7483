"""Engagements, the documents of one (with live status), and the download of an original."""

from __future__ import annotations

from pathlib import PurePath

from django.db.models import Count, F
from django.http import FileResponse, Http404
from django.shortcuts import render

from engagements.models import Engagement
from engagements.scoping import scoped
from ingest.models import Document
from reviewer import access, clauses, stall
from reviewer.htmx import render_page


def home(request):
    engagements = (
        scoped(Engagement.objects.all(), request.user)
        .annotate(my_role=F("memberships__role"), document_count=Count("documents", distinct=True))
        .order_by("name")
    )
    return render(request, "reviewer/home.html", {"engagements": engagements})


def _documents(engagement) -> list[Document]:
    documents = clauses.counted(
        Document.objects.filter(engagement=engagement).defer("text").order_by("title", "id")
    )
    stall.notices_for(documents)
    return documents


def engagement_detail(request, engagement_id: int):
    engagement = access.engagement_for(request.user, engagement_id)
    documents = _documents(engagement)
    role = engagement.my_role  # type: ignore[attr-defined]  # annotated by reviewer.access
    context = {
        "engagement": engagement,
        "role": role,
        "documents": documents,
        "polling": clauses.still_working(documents),
    }
    return render_page(request, "reviewer/engagement.html", "reviewer/_documents.html", context)


def documents_status(request, engagement_id: int):
    """The documents table alone; htmx polls it every 2 s while any document is still in the pipeline."""
    return engagement_detail(request, engagement_id)


def document_file(request, document_id: int):
    """Download the uploaded original (scoped like everything else)."""
    document = access.document_for(request.user, document_id)
    if not document.file:
        raise Http404("No file.")
    try:
        handle = document.file.open("rb")
    except FileNotFoundError:
        raise Http404("The stored file is missing.") from None
    # a file from an archive is named by its path there ("folder/contract.pdf"): saved as its own name
    return FileResponse(handle, as_attachment=True, filename=PurePath(document.original_name).name)
