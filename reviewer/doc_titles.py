"""A document's title: an admin renames it (the uploaded file's name stays as ``original_name``), and every
title it had is kept as a ``DocumentTitleChange``."""

from __future__ import annotations

import unicodedata
from typing import cast

from django.contrib.auth.models import User
from django.db import transaction

from ingest.models import Document
from reviewer.models import DocumentTitleChange

MAX_CHARS = cast(int, Document._meta.get_field("title").max_length)  # a CharField's, set in the model


class TitleChangeError(ValueError):
    """The rename was refused; the message says why, in words for the admin."""


def rename_document(document: Document, new_title: str, user: User) -> DocumentTitleChange:
    """Set ``document``'s title to ``new_title`` (spaces collapsed) as ``user`` and keep the old one."""
    new_title = " ".join((new_title or "").split())
    if not new_title:
        raise TitleChangeError("Type a title.")
    if len(new_title) > MAX_CHARS:
        raise TitleChangeError(f"A title has at most {MAX_CHARS} characters.")
    if any(unicodedata.category(ch) == "Cc" for ch in new_title):
        raise TitleChangeError("A title cannot hold control characters.")
    with transaction.atomic():
        current = Document.objects.select_for_update().only("title").get(pk=document.pk)
        if current.title == new_title:
            raise TitleChangeError(f"The title is already “{new_title}”.")
        change = DocumentTitleChange.objects.create(
            document_id=document.pk, old_title=current.title, new_title=new_title, changed_by=user
        )
        Document.objects.filter(pk=document.pk).update(title=new_title)
    document.title = new_title
    return change
