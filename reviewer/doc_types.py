"""A document's type: an admin's change of it (kept, never overwritten).

The upload form and the change form offer the same names: ``ingest.doctype.type_choices``.
"""

from __future__ import annotations

import unicodedata
from typing import cast

from django.contrib.auth.models import User
from django.db import transaction

from ingest.models import Document
from reviewer.models import DocumentTypeChange

MAX_CHARS = cast(int, Document._meta.get_field("doc_type").max_length)  # a CharField's, set in the model


class TypeChangeError(ValueError):
    """The change was refused; the message says why, in words for the admin."""


def change_doc_type(document: Document, new_type: str, user: User) -> DocumentTypeChange:
    """Set ``document``'s type to ``new_type`` as ``user`` (an admin) and keep the old one."""
    new_type = " ".join((new_type or "").split())
    if not new_type:
        raise TypeChangeError("Type a document type.")
    if len(new_type) > MAX_CHARS:
        raise TypeChangeError(f"A document type has at most {MAX_CHARS} characters.")
    if any(unicodedata.category(ch) == "Cc" for ch in new_type):
        raise TypeChangeError("A document type cannot hold control characters.")
    with transaction.atomic():
        current = Document.objects.select_for_update().only("doc_type", "doc_type_source").get(pk=document.pk)
        if current.doc_type == new_type and current.doc_type_source == Document.TypeSource.ADMIN:
            raise TypeChangeError(f"The type is already “{new_type}”.")
        change = DocumentTypeChange.objects.create(
            document_id=document.pk,
            old_type=current.doc_type,
            old_source=current.doc_type_source,
            new_type=new_type,
            changed_by=user,
        )
        Document.objects.filter(pk=document.pk).update(
            doc_type=new_type, doc_type_source=Document.TypeSource.ADMIN
        )
    document.doc_type, document.doc_type_source = new_type, Document.TypeSource.ADMIN
    return change
