"""An admin corrects or confirms a document's type (the form sits in the document page's header)."""
from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect

from reviewer import access
from reviewer.doc_types import TypeChangeError, change_doc_type
from reviewer.posting import post_only


@post_only("document", "document_id")
def change_type(request, document_id: int):
    doc = access.document_for(request.user, document_id, access.MANAGE_ROLES)
    try:
        change = change_doc_type(doc, request.POST.get("doc_type", ""), request.user)
    except TypeChangeError as exc:
        messages.error(request, str(exc))
    else:
        old, new = change.old_type, change.new_type
        said = f"from “{old}” to “{new}”" if old and old != new else f"“{new}”"
        messages.success(request, f"Document type set {said}. Managers' figures use it from their next refresh.")
    return redirect("document", doc.pk)
