"""What the documents table says of work on a document that has not moved for a while.

A pipeline stage writes the document's progress as it goes (at least at its start and end, every half
second while embedding), and an extraction marks each clause type as it starts and ends it. So work
unchanged for ``QUIET_AFTER_S`` is worth a word: queued work waits for a free worker (other work ahead of
it, or no worker running); running work may have lost its worker, and the broker hands it out again only
after the visibility timeout, the beat failing it after ``config.celery.lost_after_s``. Without the word
the page shows "Embedding 34%" or "extracting, 12 clause types to go" for an hour, unexplained.
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from config.celery import lost_after_s, visibility_timeout_s
from ingest.durations import in_words
from ingest.models import Document

QUIET_AFTER_S = 10 * 60  # longer than any stage or clause goes between two writes on a healthy worker


def notice(
    status: str, updated_at: datetime, now: datetime, *, redelivered_after_s: int, failed_after_s: int
) -> str:
    """The notice for a document of pipeline ``status`` last changed at ``updated_at`` ("" when none is
    due)."""
    quiet = (now - updated_at).total_seconds()
    if status in Document.TERMINAL or quiet < QUIET_AFTER_S:
        return ""
    if status in (Document.Status.QUEUED, Document.Status.FETCHING):  # a fetch waits its turn like a stage
        return _waiting(quiet)
    return (
        f"No progress for {in_words(quiet)}. If its worker stopped, the stage starts again by itself "
        f"{in_words(redelivered_after_s)} after it began; "
        f"after {in_words(failed_after_s)} without progress the "
        "document is marked failed (upload it again to retry)."
    )


def extraction_notice(
    running: bool, changed_at: datetime, now: datetime, *, redelivered_after_s: int, failed_after_s: int
) -> str:
    """The notice for a document's extraction whose clause types last changed at ``changed_at``; ``running``:
    one of them is being extracted now (else all wait their turn)."""
    quiet = (now - changed_at).total_seconds()
    if quiet < QUIET_AFTER_S:
        return ""
    if not running:
        return _waiting(quiet)
    # (a Find a clause killed with its web process is never handed out again: the sweep alone ends it)
    return (
        f"No clause finished for {in_words(quiet)}. "
        "If its worker stopped, an extraction run in the background "
        f"starts again by itself {in_words(redelivered_after_s)} after it began, from its checkpoint; after "
        f"{in_words(failed_after_s)} without progress the clause types left are marked failed (ask for them "
        "again)."
    )


def _waiting(quiet: float) -> str:
    return (
        f"Waiting for a worker for {in_words(quiet)}: other work may be ahead of it; "
        "if none is moving, check that the workers are running."
    )


def notices_for(documents) -> None:
    """Set ``stall_notice`` (pipeline) and ``extracting_notice`` on each document of
    :func:`reviewer.clauses.counted` (the table shows them under the progress bar and the clause counts)."""
    now = timezone.now()
    limits = dict(redelivered_after_s=visibility_timeout_s(), failed_after_s=lost_after_s())
    for document in documents:
        document.stall_notice = notice(document.status, document.updated_at, now, **limits)
        document.extracting_notice = (
            extraction_notice(document.extracting_running, document.extracting_changed_at, now, **limits)
            if document.n_extracting
            else ""
        )
