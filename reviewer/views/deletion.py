"""An admin deletes a wrongly uploaded document (the confirmation sits in the document page's header)."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect

from reviewer import access
from reviewer.deletions import DeletionRefused, delete_document
from reviewer.posting import post_only


@post_only("document", "document_id")
def delete(request, document_id: int):
    doc = access.document_for(request.user, document_id, access.MANAGE_ROLES)
    try:
        gone = delete_document(doc.pk)
    except DeletionRefused as exc:
        messages.error(request, str(exc))
        return redirect("document", doc.pk)
    messages.success(request, f"Deleted “{gone.title}” with its {gone.goes_with}.")
    return redirect("engagement", doc.engagement_id)
