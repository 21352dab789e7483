"""A deleted document's uploaded file, and the images of its pages, leave the disk with it.

Django deletes rows, never the files a ``FileField`` names: a contract deleted by an admin (or with
its engagement) would otherwise stay in MEDIA_ROOT indefinitely, readable by anyone with the disk.
The file goes once the deletion commits (a deletion rolled back keeps it), and only when no
document names it.
"""

from __future__ import annotations

import logging
from functools import partial

from django.core.exceptions import SuspiciousFileOperation
from django.db import transaction
from django.db.models.signals import post_delete

from ingest.models import Document

log = logging.getLogger(__name__)


def _remove_file(storage, name: str) -> None:
    if Document.objects.filter(file=name).exists():
        return
    try:
        storage.delete(name)
    except (OSError, SuspiciousFileOperation) as exc:  # rows gone either way: log, never fail after commit
        log.warning("the file %s of a deleted document could not be removed: %s", name, exc)


def remove_file_on_commit(sender, instance: Document, using: str, **kwargs) -> None:
    if instance.file.name:
        transaction.on_commit(partial(_remove_file, instance.file.storage, instance.file.name), using=using)
    if instance.kind == "pdf":
        transaction.on_commit(partial(_remove_page_images, instance.pk), using=using)


def _remove_page_images(document_id: int) -> None:
    from ingest.page_view import remove_page_images  # pypdfium2 is loaded only where pages are drawn

    try:
        remove_page_images(document_id)
    except OSError as exc:  # rows gone either way: log, never fail after commit
        log.warning("the page images of deleted document %s could not be removed: %s", document_id, exc)


def connect() -> None:
    post_delete.connect(remove_file_on_commit, sender=Document, dispatch_uid="ingest.removal")
