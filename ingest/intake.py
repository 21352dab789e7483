"""Taking a file in: checks, dedup, storage, the Document row, and queueing its pipeline.

Every entry point (the upload view, ``manage.py ingest``, ``manage.py bulk_ingest``) calls
:func:`intake_file`. What can be judged without converting is judged here, before anything is
stored or queued: an empty file, a file over ``settings.MAX_UPLOAD_BYTES``, a file whose
bytes are not what its name says or not a kind we review, and a password-protected
DOCX/XLSX/PPTX raise :class:`IntakeError`. The rest of bad input (corrupt, encrypted PDFs,
scanned, zip bombs...) is found by conversion and
ends as a failed document (see :mod:`ingest.pipeline`).

The same bytes (sha256) in the same engagement are one document: a second upload returns the
existing row, stores nothing and queues nothing, unless its processing failed on our side or was never
sent to the workers (:func:`unsent`), when it is processed again.

The queued row is the outbox of its pipeline: the transaction that queues a document records when and
what was asked of the workers (``Document.pipeline_queued_at``, ``pipeline_then``), and the queueing itself
happens on commit. A process that dies between the two leaves a document queued that no task holds;
:func:`requeue_unsent` (the beat) sends its pipeline again.
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path, PurePath
from typing import IO

from celery import signature
from django.conf import settings
from django.contrib.auth.models import User
from django.core.files import File
from django.db import IntegrityError, transaction
from django.dispatch import Signal
from django.utils import timezone

from engagements.models import Engagement
from ingest.convert_errors import ConversionError
from ingest.models import Document, DocumentStage
from ingest.pipeline import reset_stages
from ingest.sniff import OLE_MAGIC, sniff_kind
from taskstate.models import TaskState

log = logging.getLogger(__name__)

SNIFF_BYTES = 64 * 1024
READ_BLOCK = 1024 * 1024
STORED_NAME_BYTES = 150  # file systems allow 255 bytes a name; room left for the storage's "_abc1234" suffix


class IntakeError(Exception):
    """A file refused at the door. ``code`` is stable (empty, too_large, type_mismatch,
    unsupported, encrypted, storage: the server could not store it, busy: a document to replace is
    still being processed); ``message`` is a sentence for the person who sent it."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


# Failures that were ours, not the file's (a crash, a worker lost over and over, a stage past the time
# limit, a queue that could not be reached at upload): uploading the same bytes again processes them
# again. A file refused for what it is (damaged, encrypted, a scan) is not.
RETRY_ON_UPLOAD = {"internal", "worker_lost", "timed_out", "not_queued"}


@dataclass
class IntakeResult:
    document: Document
    created: bool  # False: the same bytes were already in the engagement (nothing queued, unless retried)
    replaced: bool = False  # True: an earlier version of the same file name got these bytes
    retried: bool = False  # True: those bytes had failed for a reason of ours, and are processed again
    unsent: bool = False  # True (with retried): those bytes were queued, but their pipeline never sent
    kept: Document | None = None  # the earlier version that ``replace`` left as it was (see held_elsewhere)


def intake_file(
    engagement: Engagement,
    source,
    *,
    filename: str,
    uploaded_by: User | None = None,
    doc_type: str = "",
    replace: bool = False,
    enqueue: bool = True,
    then=None,
    folder: str = "",
) -> IntakeResult:
    """Check, store and register one file, and queue its pipeline on commit.

    ``source`` is a path or an uploaded/open binary file. With ``replace``, a document of the
    engagement with the same file name but other bytes is updated in place (new file,
    stages reset) instead of a new document being created; its pipeline then re-embeds
    only the chunks whose text changed. Not while that document is still being processed
    (``IntakeError`` "busy"), and never once clauses were extracted from it or anything else
    refers to it (:func:`held_elsewhere`): the new bytes then become a new document beside it.
    ``enqueue=False`` leaves running the pipeline to the caller (``manage.py ingest --wait`` without a
    worker). ``then(document_id)``: a Celery
    signature queued after the pipeline's last stage, whatever became of the document (it checks).
    ``folder``: where the file was in the archive it came in (``ingest.archive``), kept in its name and
    title ("folder/contract.pdf", "folder/contract").
    """
    name = PurePath(filename or getattr(source, "name", "") or "upload").name
    if folder:
        name = in_folder(folder, name)
    with open_upload(source) as handle:
        size = upload_size(handle)
        if size == 0:
            raise IntakeError("empty", f"“{name}” is empty.")
        if size > settings.MAX_UPLOAD_BYTES:
            raise IntakeError(
                "too_large",
                f"“{name}” {over_limit(size, settings.MAX_UPLOAD_BYTES)}. Split it or compress its images.",
            )
        digest, head = file_sha256(handle)
        check_kind(handle, head, name, size)

        existing = Document.objects.filter(engagement=engagement, sha256=digest).first()
        if existing is not None:
            retry = existing.status == Document.Status.FAILED and existing.error_code in RETRY_ON_UPLOAD
            if retry:
                retry = reprocess(existing, enqueue=enqueue, then=then, only_failed=RETRY_ON_UPLOAD)
                existing.refresh_from_db()
                return IntakeResult(existing, created=False, retried=retry)
            sent = existing.status == Document.Status.QUEUED and requeue(existing, enqueue=enqueue, then=then)
            if sent:
                existing.refresh_from_db()
            return IntakeResult(existing, created=False, retried=sent, unsent=sent)
        if replace:
            earlier = (
                Document.objects.filter(engagement=engagement, original_name=name)
                .order_by("-created_at", "-pk")
                .first()
            )
            if earlier is not None and earlier.status not in SETTLED:
                raise IntakeError(
                    "busy",
                    f"“{name}” is still being processed ({earlier.status}); replace it "
                    "once it is ready or has failed.",
                )
            if earlier is not None and not held_elsewhere(earlier):
                return _replace(earlier, handle, name, digest, size, doc_type, enqueue, then)
            # an earlier version with clauses, reviews or summaries is kept as it is: these bytes
            # become a document of their own beside it
            if earlier is not None:
                result = _create(engagement, handle, name, digest, size, uploaded_by, doc_type, enqueue, then)
                result.kept = earlier
                return result
        return _create(engagement, handle, name, digest, size, uploaded_by, doc_type, enqueue, then)


SETTLED = {Document.Status.READY, Document.Status.FAILED, Document.Status.NEEDS_OCR}


def held_elsewhere(document: Document) -> bool:
    """Whether rows of other apps point at ``document`` (extracted clauses, reviews, summaries...).
    Such a document is never changed in place: their citations hold offsets into its text. Asked
    through Django's relations, so ingest needs to know nothing of those apps."""
    for relation in Document._meta.related_objects:
        model = relation.field.model  # what ``related_model`` returns (its stub also allows "self")
        if (
            model._meta.app_label != Document._meta.app_label
            and model._base_manager.filter(**{relation.field.name: document}).exists()
        ):
            return True
    return False


def _create(
    engagement, handle, name, digest, size, uploaded_by, doc_type, enqueue, then=None
) -> IntakeResult:
    document = Document(
        engagement=engagement,
        original_name=name,
        sha256=digest,
        size_bytes=size,
        title=name[: len(name) - len(PurePath(name).suffix)][:300],
        doc_type=doc_type,
        doc_type_source=Document.TypeSource.UPLOAD if doc_type else "",
        uploaded_by=uploaded_by,
        status=Document.Status.QUEUED,
    )
    store_file(document, handle, name)
    try:
        with transaction.atomic():
            document.save()
            DocumentStage.objects.bulk_create(
                [DocumentStage(document=document, name=stage) for stage in DocumentStage.Name.values]
            )
            if enqueue:
                enqueue_on_commit(document.pk, then)
    except IntegrityError:
        # Someone stored the same bytes in the same engagement a moment ago.
        document.file.delete(save=False)
        existing = Document.objects.filter(engagement=engagement, sha256=digest).first()
        if existing is None:
            raise
        return IntakeResult(existing, created=False)
    except BaseException:
        document.file.delete(save=False)
        raise
    return IntakeResult(document, created=True)


def _replace(document: Document, handle, name, digest, size, doc_type, enqueue, then=None) -> IntakeResult:
    old_file = document.file.name
    if doc_type:
        typed = {"doc_type": doc_type, "doc_type_source": Document.TypeSource.UPLOAD}
    elif document.doc_type_source in (Document.TypeSource.TITLE, Document.TypeSource.MODEL):
        typed = {"doc_type": "", "doc_type_source": ""}  # the new file's type is read (or asked) again
    else:
        typed = {}
    store_file(document, handle, name)
    with transaction.atomic():
        Document.objects.filter(pk=document.pk).update(
            file=document.file.name,
            sha256=digest,
            size_bytes=size,
            status=Document.Status.QUEUED,
            progress=0,
            error="",
            error_code="",
            updated_at=timezone.now(),
            **typed,
        )
        reset_stages(document)
        if enqueue:
            enqueue_on_commit(document.pk, then)
    if old_file and old_file != document.file.name:
        document.file.storage.delete(old_file)
    document.refresh_from_db()
    return IntakeResult(document, created=False, replaced=True)


def reprocess(document: Document, *, enqueue: bool = True, then=None, only_failed=None) -> bool:
    """Run the whole pipeline of a document again (cached embeddings make it cheap). With ``only_failed``
    (error codes), only while the document is still failed with one of them: of two uploads that retry
    it at once, the first queues it and the second finds it queued. True when it was queued here."""
    with transaction.atomic():
        rows = Document.objects.filter(pk=document.pk)
        if only_failed is not None:
            rows = rows.filter(status=Document.Status.FAILED, error_code__in=only_failed)
        if not rows.update(
            status=Document.Status.QUEUED, progress=0, error="", error_code="", updated_at=timezone.now()
        ):
            return False
        reset_stages(document)
        if enqueue:
            enqueue_on_commit(document.pk, then)
    return True


# A task of the pipeline waiting in the queue or running: a queued document with one is not stuck.
LIVE_TASK_STATES = (TaskState.State.PENDING, TaskState.State.STARTED, TaskState.State.RETRY)


def unsent(document: Document) -> bool:
    """Whether ``document`` is queued, unchanged for ``settings.REQUEUE_UNSENT_AFTER`` seconds since it was
    last queued, and no task of its pipeline is waiting in the queue or running since then: its queueing was
    lost (the process died after the commit), or its caller (``ingest --inline``) died before running it.
    The first stage of a queued document has not started (it sets the document converting), so its first
    task, ``ingest.convert``, is the one to look for."""
    asked = max(filter(None, (document.pipeline_queued_at, document.updated_at)))
    if (
        document.status != Document.Status.QUEUED
        or (timezone.now() - asked).total_seconds() < settings.REQUEUE_UNSENT_AFTER
    ):
        return False
    return not TaskState.objects.filter(
        name="ingest.convert",
        # what ``before_task_publish`` records of the task's arguments: a list sent in a chain, else a tuple
        args__in=(f"[{document.pk}]", f"({document.pk},)"),
        state__in=LIVE_TASK_STATES,
        queued_at__gte=document.pipeline_queued_at or document.updated_at,
    ).exists()


def requeue(document: Document, *, enqueue: bool = True, then=None) -> bool:
    """Send the pipeline of a queued document again when it is :func:`unsent`, after ``then`` (or what the
    upload that queued it asked to run after it). Of two callers at once, the first sends it and the second
    finds it just queued. True when it was sent here (or, with ``enqueue=False``, left to the caller)."""
    with transaction.atomic():
        row = Document.objects.select_for_update().filter(pk=document.pk).first()
        if row is None or not unsent(row):
            return False
        if then is None and row.pipeline_then:
            then = _stored_then(row.pipeline_then)
        log.warning("the pipeline of queued document %s was never sent to the workers: sending it", row.pk)
        Document.objects.filter(pk=row.pk).update(updated_at=timezone.now(), pipeline_queued_at=None)
        if enqueue:
            enqueue_on_commit(row.pk, then)
    return True


def requeue_unsent() -> int:
    """The beat's sweep of the outbox: send the pipeline of every queued document the workers were asked to
    run that no task holds (:func:`unsent`). Returns how many were sent."""
    cutoff = timezone.now() - timedelta(seconds=settings.REQUEUE_UNSENT_AFTER)
    waiting = Document.objects.filter(status=Document.Status.QUEUED, pipeline_queued_at__lt=cutoff)
    return sum(requeue(document) for document in waiting.only("pk"))


def _stored_then(stored: dict):
    return lambda document_id: signature(stored)


# Sent on commit when a saved document's pipeline is to be queued; arguments ``document_id`` and
# ``then`` (a follow-on signature factory, or None). The receiver in ``ingest.signals`` queues it; an
# exception it raises (the broker unreachable) reaches the sender, which marks the document.
pipeline_requested = Signal()


NOT_QUEUED = (
    "The background workers' queue could not be reached, so processing never started. Upload the "
    "same file again to retry."
)


def enqueue_on_commit(document_id: int, then=None) -> None:
    """Record in the document what the workers are asked (the outbox, read by :func:`requeue_unsent`), and
    ask them when the transaction commits."""
    Document.objects.filter(pk=document_id).update(
        pipeline_queued_at=timezone.now(), pipeline_then=dict(then(document_id)) if then else None
    )

    def send():
        try:
            pipeline_requested.send(Document, document_id=document_id, then=then)
        except Exception:  # a broker that cannot be reached: the document, saved with its file, says so
            log.exception("could not queue the pipeline of document %s", document_id)
            Document.objects.filter(pk=document_id, status=Document.Status.QUEUED).update(
                status=Document.Status.FAILED, error_code="not_queued", error=NOT_QUEUED
            )

    transaction.on_commit(send)


# --------------------------------------------------------------------------- file helpers


def store_file(document: Document, handle, name: str) -> None:
    """Save the upload into ``document.file`` (not the row) under :func:`stored_name`; a storage
    failure (a full disk, a file system refusing the name) is refused with words, not a crash."""
    stored = stored_name(PurePath(name).name)  # an archive's folders stay in the name shown, not on disk
    handle.seek(0)
    try:
        document.file.save(stored, File(handle, name=stored), save=False)
    except OSError as exc:
        raise IntakeError(
            "storage", f"“{name}” could not be stored on the server ({exc.strerror or exc}). Try again later."
        ) from exc


def in_folder(folder: str, name: str, max_chars: int = 300) -> str:
    """``folder/name`` in at most ``max_chars`` characters (a document's ``original_name``): a long folder
    path loses its beginning, shown as "…", never the file's own name."""
    path = f"{folder.strip('/')}/{name}"
    if len(path) <= max_chars:
        return path
    return ("…" + path[len(path) - max_chars + 1 :]) if len(name) < max_chars - 2 else name[-max_chars:]


def stored_name(name: str, max_bytes: int = STORED_NAME_BYTES) -> str:
    """``name`` shortened to at most ``max_bytes`` bytes of UTF-8 (file systems count bytes, and a
    Chinese or Cyrillic name has two or three a character), its extension kept, no character cut
    in half. The document keeps the full name in ``original_name`` for display."""
    if len(name.encode()) <= max_bytes:
        return name
    path = PurePath(name)
    suffix = path.suffix if len(path.suffix.encode()) <= 16 else ""
    stem = name[: len(name) - len(suffix)] if suffix else name
    room = max_bytes - len(suffix.encode())
    stem = stem.encode()[:room].decode("utf-8", errors="ignore").rstrip(" .")
    return (stem or "upload") + suffix


class open_upload:
    """A binary, seekable handle on ``source`` (path or file object); closes only what it opened."""

    def __init__(self, source):
        self.source = source
        self.opened: IO[bytes] | None = None

    def __enter__(self) -> IO[bytes]:
        if isinstance(self.source, (str, os.PathLike)):
            self.opened = open(Path(self.source), "rb")
            return self.opened
        handle = self.source
        if hasattr(handle, "open") and getattr(handle, "closed", False):
            handle.open("rb")
        handle.seek(0)
        return handle

    def __exit__(self, *exc) -> None:
        if self.opened is not None:
            self.opened.close()


def upload_size(handle) -> int:
    size = getattr(handle, "size", None)
    if isinstance(size, int):
        return size
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    handle.seek(0)
    return size


def _human(size: int, decimals: int = 1) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.{decimals}f} {unit}"
    return f"{size} bytes"


def over_limit(size: int, limit: int) -> str:
    """The words "is <size>; the limit is <limit>", in figures that differ (a file 7 bytes over 100 MB was
    told "is 100.0 MB; the limit is 100.0 MB"): more decimals while they would read the same, then bytes."""
    for decimals in (1, 2, 3):
        said, limit_said = _human(size, decimals), _human(limit, decimals)
        if said != limit_said:
            return f"is {said}; the limit is {limit_said}"
    return f"is {size:,} bytes; the limit is {limit:,} bytes ({_human(limit)})"


def file_sha256(handle) -> tuple[str, bytes]:
    handle.seek(0)
    digest = hashlib.sha256()
    head = b""
    while block := handle.read(READ_BLOCK):
        if len(head) < SNIFF_BYTES:
            head += block[: SNIFF_BYTES - len(head)]
        digest.update(block)
    return digest.hexdigest(), head


def check_kind(handle, head: bytes, name: str, size: int) -> str:
    """The kind the bytes are (ZIP and compound files are read whole: their directory is at the
    end, or anywhere, and says whether the file is a document or a password-protected one)."""
    data = head
    if head.startswith((b"PK", OLE_MAGIC)) and size > len(head):
        handle.seek(0)
        data = handle.read()
    try:
        return sniff_kind(data, name)
    except ConversionError as exc:
        message = exc.message if name in exc.message else f"“{name}”: {exc.message}"
        raise IntakeError(exc.code, message) from None
