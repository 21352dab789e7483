"""Engagement and document pages (thin: load scoped rows, render)."""
from django.db.models import Count
from django.http import FileResponse
from django.shortcuts import render

from engagements.models import Engagement
from engagements.scoping import get_scoped_or_404, require_role, scoped
from ingest.models import Document


def home(request):
    engagements = scoped(Engagement.objects.all(), request.user).annotate(document_count=Count("documents"))
    return render(request, "reviewer/home.html", {"engagements": engagements})


def engagement_detail(request, engagement_id: int):
    engagement = get_scoped_or_404(Engagement.objects.all(), request.user, pk=engagement_id)
    role = require_role(request.user, engagement)
    documents = engagement.documents.order_by("title")
    return render(
        request, "reviewer/engagement.html", {"engagement": engagement, "documents": documents, "role": role}
    )


def document_file(request, document_id: int):
    """Download the uploaded original (scoped like everything else)."""
    document = get_scoped_or_404(Document.objects.all(), request.user, pk=document_id)
    return FileResponse(document.file.open("rb"), as_attachment=True, filename=document.original_name)
