"""What the documents table says of a document in the pipeline that has not moved for a while.

A stage writes the document's progress as it goes (at least at its start and end, every half second while
embedding), so a row unchanged for ``QUIET_AFTER_S`` is worth a word: a queued one waits for a free worker
(other documents ahead of it, or no worker running); a running one may have lost its worker, and the
broker hands its work out again only after the visibility timeout, the beat failing it after
``config.celery.lost_after_s``. Without the word the page shows "Embedding 34%" for an hour, unexplained.
"""
from __future__ import annotations

from datetime import datetime

from ingest.durations import in_words

QUIET_AFTER_S = 10 * 60  # longer than any stage goes between two progress writes on a healthy worker


def notice(status: str, updated_at: datetime, now: datetime, *, redelivered_after_s: int, failed_after_s: int) -> str:
    """The notice for a document of ``status`` last changed at ``updated_at`` ("" when none is due)."""
    from ingest.models import Document

    quiet = (now - updated_at).total_seconds()
    if status in (Document.Status.READY, Document.Status.FAILED, Document.Status.NEEDS_OCR) or quiet < QUIET_AFTER_S:
        return ""
    if status == Document.Status.QUEUED:
        return (f"Waiting for a worker for {in_words(quiet)}: other documents may be ahead of it; if none is "
                "moving, check that the workers are running.")
    return (f"No progress for {in_words(quiet)}. If its worker stopped, the stage starts again by itself "
            f"{in_words(redelivered_after_s)} after it began; after {in_words(failed_after_s)} without progress the "
            "document is marked failed (upload it again to retry).")


def notices_for(documents) -> None:
    """Set ``stall_notice`` on each document (the table shows it under the progress bar)."""
    from django.utils import timezone

    from config.celery import lost_after_s, visibility_timeout_s

    now, redelivered, failed = timezone.now(), visibility_timeout_s(), lost_after_s()
    for document in documents:
        document.stall_notice = notice(document.status, document.updated_at, now,
                                       redelivered_after_s=redelivered, failed_after_s=failed)
