"""A deleted document's uploaded file leaves the disk with it.

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


def connect() -> None:
    post_delete.connect(remove_file_on_commit, sender=Document, dispatch_uid="ingest.removal")
