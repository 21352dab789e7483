"""An admin renames a document: a page with the title, the file's own name and the earlier titles.
Scoped like every document page: a non-member gets a 404, a member who is not an admin a 403."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse

from reviewer import access
from reviewer.doc_titles import MAX_CHARS, TitleChangeError, rename_document

CHANGES_SHOWN = 20


def rename(request, document_id: int):
    doc = access.document_for(request.user, document_id, access.MANAGE_ROLES)
    error, status = "", 200
    if request.method == "POST":
        try:
            change = rename_document(doc, request.POST.get("title", ""), request.user)
        except TitleChangeError as exc:
            error, status = str(exc), 422
        else:
            messages.success(request, f"Renamed “{change.old_title}” to “{change.new_title}”.")
            return redirect(reverse("document", args=[doc.pk]))
    context = {
        "document": doc,
        "engagement": doc.engagement,
        "role": doc.my_role,  # type: ignore[attr-defined]  # annotated by reviewer.access
        "error": error,
        "wanted": request.POST.get("title", doc.title) if request.method == "POST" else doc.title,
        "max_chars": MAX_CHARS,
        "changes": doc.title_changes.select_related("changed_by")[:CHANGES_SHOWN],
    }
    return render(request, "reviewer/document_title.html", context, status=status)
