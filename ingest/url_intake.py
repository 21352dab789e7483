"""A contract from a URL: a document fetched by a worker, then processed like an uploaded file.

:func:`intake_url` (the upload page, ``manage.py ingest URL``) checks the URL at the door (http or https
only, :func:`ingest.fetch.check_url`) and registers a document in status ``fetching`` that records the
URL (``Document.source_url``) and has no bytes yet; the fetch is queued on commit (signal
:data:`fetch_requested`, received in :mod:`ingest.signals`, task ``ingest.fetch``). The fetch runs in a
worker, not in the web request: it may take up to ``URL_FETCH_TIMEOUT`` seconds a URL, and an upload
may name many URLs.

:func:`fetch_document` (the task, or ``manage.py ingest --inline``) fetches within the limits of the
settings (:func:`limits`), with every address checked (:mod:`ingest.fetch`). The kind is read from the
bytes, whatever the URL or ``Content-Type`` say (a ``.pdf`` URL that answers with a login page is a
web page), and named by it ("msa.html", "terms.pdf"). The bytes then go through the same checks as an
uploaded file (empty, size, kind) and the same dedup by content; the document records when they
arrived (``Document.fetched_at``) and its pipeline is queued. A URL that cannot be fetched, or whose
bytes are refused, ends its document ``failed`` with a code and a sentence; nothing is stored and
nothing else is touched. Submitting the same URL again fetches it again into that document.
"""

from __future__ import annotations

import logging
from pathlib import PurePath
from urllib.parse import urlsplit

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.dispatch import Signal
from django.utils import timezone

from engagements.models import Engagement
from ingest.fetch import Fetched, FetchError, Limits, check_url, fetch
from ingest.intake import (
    RETRY_ON_UPLOAD,
    IntakeError,
    IntakeResult,
    check_kind,
    enqueue_on_commit,
    file_sha256,
    over_limit,
    reprocess,
    store_file,
)
from ingest.models import Document, DocumentStage

log = logging.getLogger(__name__)

# Sent on commit when a document's fetch is to be queued; arguments ``document_id`` and ``then`` (a
# Celery signature to run after its pipeline, or None). The receiver in ``ingest.signals`` queues it.
fetch_requested = Signal()

EXTENSIONS = {
    "pdf": ".pdf",
    "docx": ".docx",
    "xlsx": ".xlsx",
    "pptx": ".pptx",
    "epub": ".epub",
    "html": ".html",
    "markdown": ".md",
    "text": ".txt",
}
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# A fetch still "fetching" after this long (its message lost with a worker, or waiting behind other work)
# is sent again when its URL is submitted again; the first of the two deliveries to finish fills it.
RESEND_AFTER_S = 5 * 60
NOT_QUEUED = (
    "The background workers' queue could not be reached, so the fetch never started. Submit the URL "
    "again to retry."
)


def limits() -> Limits:
    """The fetch limits of the settings (never more bytes than an upload may have)."""
    return Limits(
        max_bytes=min(settings.URL_FETCH_MAX_BYTES, settings.MAX_UPLOAD_BYTES),
        timeout=settings.URL_FETCH_TIMEOUT,
        max_redirects=settings.URL_FETCH_MAX_REDIRECTS,
        allowed_hosts=frozenset(settings.URL_FETCH_ALLOWED_HOSTS),
    )


def intake_url(
    engagement: Engagement,
    url: str,
    *,
    uploaded_by: User | None = None,
    doc_type: str = "",
    enqueue: bool = True,
    then=None,
) -> IntakeResult:
    """Register a document for ``url`` and queue its fetch on commit (see the module doc).

    Raises :class:`IntakeError` for a URL refused at the door (code ``url_refused``). The same URL
    already in the engagement: still being fetched, that document is returned (its fetch sent again
    when it has not moved for :data:`RESEND_AFTER_S`); failed before its bytes arrived, it is fetched
    again (``retried``); failed on our side after, it is processed again (``retried``). ``then``, as for
    :func:`ingest.intake.intake_file`, runs after the pipeline.
    """
    url = url.strip()
    try:
        check_url(url)
    except FetchError as exc:
        raise IntakeError(exc.code, f"“{_short(url)}”: {exc.message}") from None
    earlier = Document.objects.filter(engagement=engagement, source_url=url).order_by("-pk")
    fetching = earlier.filter(status=Document.Status.FETCHING).first()
    if fetching is not None:
        quiet = (timezone.now() - fetching.updated_at).total_seconds()
        if enqueue and quiet > RESEND_AFTER_S:
            _fetch_on_commit(fetching.pk, then)
        return IntakeResult(fetching, created=False)
    failed = earlier.filter(status=Document.Status.FAILED).first()
    if failed is not None and not failed.sha256:
        with transaction.atomic():
            again = Document.objects.filter(pk=failed.pk, status=Document.Status.FAILED, sha256="").update(
                status=Document.Status.FETCHING,
                progress=0,
                error="",
                error_code="",
                updated_at=timezone.now(),
            )
            if again and enqueue:
                _fetch_on_commit(failed.pk, then)
        failed.refresh_from_db()
        return IntakeResult(failed, created=False, retried=bool(again))
    if failed is not None and failed.error_code in RETRY_ON_UPLOAD:
        retried = reprocess(failed, enqueue=enqueue, then=then, only_failed=RETRY_ON_UPLOAD)
        failed.refresh_from_db()
        return IntakeResult(failed, created=False, retried=retried)
    parts = urlsplit(url)
    document = Document(
        engagement=engagement,
        original_name=url[:300],
        sha256="",
        title=f"{parts.hostname}{parts.path}".rstrip("/")[:300],
        doc_type=doc_type,
        doc_type_source=Document.TypeSource.UPLOAD if doc_type else "",
        uploaded_by=uploaded_by,
        status=Document.Status.FETCHING,
        source_url=url,
    )
    with transaction.atomic():
        document.save()
        DocumentStage.objects.bulk_create(
            [DocumentStage(document=document, name=stage) for stage in DocumentStage.Name.values]
        )
        if enqueue:
            _fetch_on_commit(document.pk, then)
    return IntakeResult(document, created=True)


def fetch_document(document_id: int, *, enqueue: bool = True, then=None) -> bool:
    """Fetch a ``fetching`` document's URL and queue its pipeline (``then`` after it), or end it failed
    with the reason. True when its bytes are in. A document gone, or no longer fetching (a second
    delivery of the task), is left alone."""
    document = Document.objects.filter(pk=document_id, status=Document.Status.FETCHING).first()
    if document is None:
        return False
    Document.objects.filter(pk=document.pk, status=Document.Status.FETCHING).update(updated_at=timezone.now())
    try:
        fetched = fetch(document.source_url, limits())
        with fetched.body:
            return _take_in(document, fetched, enqueue, then)
    except FetchError as exc:
        _fail(document, exc.code, exc.message)
        return False
    except SoftTimeLimitExceeded:
        _fail(
            document,
            "timed_out",
            "The fetch ran past the worker's time limit. Submit the URL again to retry.",
        )
        return False
    except Exception as exc:  # ours, not the URL's: recorded on the document, and the task fails
        _fail(document, "internal", f"The fetch failed unexpectedly ({type(exc).__name__}: {exc})."[:2000])
        raise


def _take_in(document: Document, fetched: Fetched, enqueue: bool, then) -> bool:
    """The fetched bytes through the door of an uploaded file (checks, dedup, storage), into ``document``."""
    handle, size = fetched.body, fetched.size
    try:
        if size == 0:
            raise IntakeError("empty", "The URL answered with an empty file.")
        if size > settings.MAX_UPLOAD_BYTES:
            raise IntakeError("too_large", f"The file {over_limit(size, settings.MAX_UPLOAD_BYTES)}.")
        digest, head = file_sha256(handle)
        name = _name(fetched, handle, head)
        check_kind(handle, head, name, size)
    except IntakeError as exc:
        _fail(document, exc.code, exc.message)
        return False
    existing = (
        Document.objects.filter(engagement_id=document.engagement_id, sha256=digest)
        .exclude(pk=document.pk)
        .first()
    )
    if existing is not None:
        if existing.status == Document.Status.FAILED and existing.error_code in RETRY_ON_UPLOAD:
            reprocess(existing, enqueue=enqueue, then=then, only_failed=RETRY_ON_UPLOAD)
        _fail(document, "duplicate", _duplicate(existing))
        return False
    store_file(document, handle, name)
    stored = document.file.name
    now = timezone.now()
    try:
        with transaction.atomic():
            taken = Document.objects.filter(pk=document.pk, status=Document.Status.FETCHING).update(
                file=stored,
                sha256=digest,
                size_bytes=size,
                original_name=name,
                title=name[: len(name) - len(PurePath(name).suffix)][:300],
                status=Document.Status.QUEUED,
                progress=0,
                fetched_at=now,
                updated_at=now,
            )
            if taken and enqueue:
                enqueue_on_commit(document.pk, then)
    except IntegrityError:  # an upload stored the same bytes in the engagement a moment ago
        document.file.storage.delete(stored)
        existing = Document.objects.filter(engagement_id=document.engagement_id, sha256=digest).first()
        _fail(document, "duplicate", _duplicate(existing) if existing else "The same file was just uploaded.")
        return False
    if not taken:  # deleted meanwhile, or filled by another delivery of the fetch
        document.file.storage.delete(stored)
        return False
    log.info("document %s fetched from %s: %s, %s bytes", document.pk, fetched.url, name, size)
    return True


def _name(fetched: Fetched, handle, head: bytes) -> str:
    """A file name for the fetched bytes: the URL's (or the server's) name, with the extension of the kind
    the bytes are. Bytes of no kind we review keep a name without one: the kind check then says why."""
    given = fetched.filename or urlsplit(fetched.url).hostname or "download"
    stem, suffix = given[: len(given) - len(PurePath(given).suffix)] or given, PurePath(given).suffix.lower()
    try:
        kind = check_kind(handle, head, "", fetched.size)  # by the bytes alone
    except IntakeError:
        return stem
    if kind == "text" and fetched.content_type in _HTML_TYPES:
        kind = "html"  # a page that does not open with <html>, sent as one
    elif kind == "text" and (fetched.content_type == "text/markdown" or suffix in (".md", ".markdown")):
        kind = "markdown"
    return f"{stem}{EXTENSIONS[kind]}"


def _duplicate(existing: Document) -> str:
    said = f"The file at this URL is the same as “{existing.title}”, already in this engagement"
    if existing.status == Document.Status.FAILED:
        return f"{said}, where it failed: {existing.error}"
    return f"{said}; nothing new to process."


def _fail(document: Document, code: str, message: str) -> None:
    """End a fetching document failed with ``message``; nothing of it was stored."""
    Document.objects.filter(pk=document.pk, status=Document.Status.FETCHING).update(
        status=Document.Status.FAILED, error_code=code[:32], error=message, updated_at=timezone.now()
    )
    log.info("document %s not fetched from %s: %s (%s)", document.pk, document.source_url, message, code)


def _fetch_on_commit(document_id: int, then=None) -> None:
    """Ask the workers to fetch the document once the transaction commits (``then(document_id)``, a
    signature, runs after its pipeline)."""
    follow = dict(then(document_id)) if then is not None else None

    def send() -> None:
        try:
            fetch_requested.send(Document, document_id=document_id, then=follow)
        except Exception:  # a broker that cannot be reached: the document says so
            log.exception("could not queue the fetch of document %s", document_id)
            Document.objects.filter(pk=document_id, status=Document.Status.FETCHING).update(
                status=Document.Status.FAILED, error_code="not_queued", error=NOT_QUEUED
            )

    transaction.on_commit(send)


def _short(url: str, chars: int = 120) -> str:
    return url if len(url) <= chars else url[: chars - 1] + "…"
