"""Celery tasks: thin wrappers around ``pipeline``. ``acks_late`` + reject on worker loss:
a worker killed mid-run leaves the message unacknowledged, it is redelivered, and the
new session resumes from the checkpoint (done tasks are skipped). A ``max_tokens`` stop, the
soft time limit (a long document: the hard limit would kill the task with its clause tasks left
running) and a lost database connection are resumed the same way, in a fresh task, at most
``MAX_RESUMES`` times; any other error fails the document's open clause tasks with its message."""
from __future__ import annotations

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.db import InterfaceError, OperationalError

from extraction import pipeline

MAX_RESUMES = 8
# Resumed from the checkpoint rather than failed: the time limit, the database restarting, a dropped connection.
RESUMABLE = (SoftTimeLimitExceeded, OperationalError, InterfaceError)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=MAX_RESUMES,
             name="extraction.tasks.extract_document")
def extract_document(self, run_id: int, document_id: int) -> str:
    reason, countdown = "max_tokens", 0
    try:
        result = pipeline.process_document(run_id, document_id)
    except RESUMABLE as exc:
        result, reason = pipeline.INTERRUPTED, type(exc).__name__
        if not isinstance(exc, SoftTimeLimitExceeded):  # give the database time to come back
            countdown = min(60, 5 * 2 ** self.request.retries)
    except Exception as exc:
        pipeline.fail_open_tasks(run_id, document_id, f"{type(exc).__name__}: {exc}")
        raise
    if result == pipeline.INTERRUPTED:
        if self.request.retries >= MAX_RESUMES:
            pipeline.fail_open_tasks(run_id, document_id, f"interrupted {MAX_RESUMES} times ({reason})")
            return "failed"
        raise self.retry(countdown=countdown)  # a fresh session resumes from the checkpoint
    return result

@shared_task(name="extraction.tasks.extract_when_ready")
def extract_when_ready(document_id: int, user_id: int | None = None, engine: str | None = None) -> str:
    """Chained after an upload's ingest pipeline: a run over the document and every active clause
    type when it became ready; nothing when it did not (failed, needs OCR) or is gone."""
    from extraction.runs import extract_ready_document

    run = extract_ready_document(document_id, user_id=user_id, engine=engine)
    return f"run {run.pk}" if run is not None else "no run: not ready, or already extracted since it became ready"
