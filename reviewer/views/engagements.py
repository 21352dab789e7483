"""Engagements, a new one, the documents of one (with live status), and the download of an original."""

from __future__ import annotations

from pathlib import PurePath

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Count, F
from django.http import FileResponse, Http404
from django.shortcuts import redirect, render

from engagements.models import Engagement, Membership, Role
from engagements.scoping import scoped
from ingest.models import Document
from reviewer import access, clauses, stall
from reviewer.forms import EngagementForm
from reviewer.htmx import render_page


def can_create_engagements(user) -> bool:
    """Superusers and the admins of an engagement open new engagements (auditors and managers do not)."""
    return user.is_superuser or Membership.objects.filter(user=user, role=Role.ADMIN).exists()


def home(request):
    engagements = (
        scoped(Engagement.objects.all(), request.user)
        .annotate(my_role=F("memberships__role"), document_count=Count("documents", distinct=True))
        .order_by("name")
    )
    context = {"engagements": engagements, "can_create": can_create_engagements(request.user)}
    return render(request, "reviewer/home.html", context)


def new_engagement(request):
    """A new engagement; whoever creates it is its first admin, and adds the others on its Members page."""
    if not can_create_engagements(request.user):
        raise PermissionDenied("Only admins and superusers open engagements.")
    form, status = EngagementForm(), 200
    if request.method == "POST":
        form = EngagementForm(request.POST)
        if form.is_valid():
            with transaction.atomic():
                engagement = form.save()
                Membership.objects.create(user=request.user, engagement=engagement, role=Role.ADMIN)
            messages.success(request, f"Opened {engagement.name}; you are its admin. Add its members here.")
            return redirect("engagement-members", engagement.pk)
        status = 422
    return render(request, "reviewer/engagement_new.html", {"form": form}, status=status)


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
