"""An admin corrects or confirms a document's type (the form sits in the document page's header)."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

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
        messages.success(
            request, f"Document type set {said}. Managers' figures use it from their next refresh."
        )
    return redirect(_back_to(request, doc))


def _back_to(request, doc) -> str:
    """The page of this document the form was sent from (a clause's URL keeps the reviewer's place),
    else the document's page."""
    page, wanted = reverse("document", args=[doc.pk]), request.POST.get("next", "")
    if wanted.startswith(page) and url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}
    ):
        return wanted
    return page
