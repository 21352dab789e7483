"""Celery tasks: thin wrappers around ``pipeline``. ``acks_late`` + reject on worker loss:
a worker killed mid-run leaves the message unacknowledged, it is redelivered, and the
new session resumes from the checkpoint (done tasks are skipped). A ``max_tokens`` stop, the
soft time limit (a long document: the hard limit would kill the task with its clause tasks left
running; the task also stops starting clauses ``STOP_BEFORE_LIMIT_S`` before it, since the SDK
swallows the limit when it lands in an HTTP wait), a lost database connection and an API that stays
overloaded or unreachable past the SDK's retries are resumed the same way, in a fresh task (after a
back-off), at most ``pipeline.MAX_RESUMES`` times; any other error fails the document's open clause tasks
with its message, unless the document (or its engagement) was deleted meanwhile: the task then ends
quietly, its run finished from the tasks left."""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from config.celery import lost_after_s
from extraction import pipeline
from extraction.launch import EXTRACT_WHEN_READY, extract_ready_document
from extraction.models import ClauseTask, ExtractionRun
from extraction.outcome import TransientEngineError
from extraction.pipeline import MAX_RESUMES
from extraction.run_status import OPEN, fail_open_tasks

log = logging.getLogger(__name__)
# Resumed from the checkpoint rather than failed: the time limit, the database restarting, a dropped
# connection, the API overloaded or unreachable for longer than the SDK's own retries.
RESUMABLE = (SoftTimeLimitExceeded, OperationalError, InterfaceError, TransientEngineError)
# No new clause is started this long before the soft time limit (one clause's answer can take minutes).
STOP_BEFORE_LIMIT_S = 600


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=MAX_RESUMES,
    name="extraction.tasks.extract_document",
)
def extract_document(self, run_id: int, document_id: int) -> str:
    reason, countdown = "max_tokens or the time limit", 0
    try:
        result = pipeline.process_document(run_id, document_id, deadline=_deadline(self), resume_later=True)
    except RESUMABLE as exc:
        result, reason = pipeline.INTERRUPTED, type(exc).__name__
        if isinstance(exc, TransientEngineError):  # minutes, not the SDK's seconds: 30 s, 1, 2, 4, 8, 10 min
            countdown = min(600, 30 * 2**self.request.retries)
        elif not isinstance(exc, SoftTimeLimitExceeded):  # give the database time to come back
            countdown = min(60, 5 * 2**self.request.retries)
    except Exception as exc:
        if pipeline.gone(run_id, document_id):  # deleted mid-clause: its writes failed on the rows that went
            return "gone"
        fail_open_tasks(run_id, document_id, f"{type(exc).__name__}: {exc}")
        raise
    if result == pipeline.INTERRUPTED:
        if not pipeline.may_resume(run_id, document_id, self.request.retries, reason):
            return "failed"
        raise self.retry(countdown=countdown)  # a fresh session resumes from the checkpoint
    return result


def _deadline(task) -> float | None:
    """When to stop starting clauses: well before the soft time limit (a hard kill mid-answer would
    leave the clause running)."""
    limit = task.request.timelimit[1] if task.request.timelimit and task.request.timelimit[1] else None
    limit = limit or getattr(settings, "CELERY_TASK_SOFT_TIME_LIMIT", None)
    return time.monotonic() + max(limit - STOP_BEFORE_LIMIT_S, limit / 2) if limit else None


@shared_task(name=EXTRACT_WHEN_READY)
def extract_when_ready(document_id: int, user_id: int | None = None, engine: str | None = None) -> str:
    """Chained after an upload's ingest pipeline: a run over the document and every active clause
    type when it became ready; nothing when it did not (failed, needs OCR) or is gone."""
    run = extract_ready_document(document_id, user_id=user_id, engine=engine)
    return (
        f"run {run.pk}"
        if run is not None
        else "no run: not ready, or already extracted since it became ready"
    )


@shared_task(name="extraction.tasks.fail_abandoned_tasks")
def fail_abandoned_tasks() -> str:
    """Fail the clause tasks of app-started runs left running by a process that died, so their
    documents do not show "extracting" (and their pages do not refresh) forever."""
    # still "running" this long after it last changed: lost with the process running it (a web worker killed
    # during Find a clause; a Celery message not redelivered), never a task still working or to be redelivered
    stale = ClauseTask.objects.filter(
        run__mode=ExtractionRun.Mode.SYNC,
        status=ClauseTask.Status.RUNNING,
        updated_at__lt=timezone.now() - timedelta(seconds=lost_after_s()),
    )
    pairs = set(stale.values_list("run_id", "document_id"))
    for run_id, document_id in pairs:
        fail_open_tasks(
            run_id,
            document_id,
            "stopped without finishing: the process running it was lost; ask for it again with Find a clause",
        )
    return f"{len(pairs)} abandoned"


NOT_QUEUED = "The task queue could not be reached, so this run never started; start it again."


def enqueue_run(run_id: int, *, queue: str | None = None) -> int:
    """One ``extract_document`` task per document with open clause tasks; returns how many were sent."""
    doc_ids = (
        ClauseTask.objects.filter(run_id=run_id, status__in=OPEN)
        .values_list("document_id", flat=True)
        .distinct()
        .order_by("document_id")
    )
    options = {"queue": queue} if queue else {}
    n = 0
    for doc_id in doc_ids:
        extract_document.apply_async((run_id, doc_id), **options)
        n += 1
    return n


def enqueue_or_say_so(run_id: int, queue: str | None = None) -> None:
    """Queue the run; a broker that cannot be reached fails its clause tasks with a sentence saying
    so: the run is saved, and does not stay queued."""
    try:
        enqueue_run(run_id, queue=queue)
    except Exception:
        log.exception("could not queue run %s", run_id)
        for doc_id in set(ClauseTask.objects.filter(run_id=run_id).values_list("document_id", flat=True)):
            fail_open_tasks(run_id, doc_id, NOT_QUEUED)
