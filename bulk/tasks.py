"""Celery tasks of bulk runs: thin wrappers around ``submit``, ``poll`` and ``harvest``.

``poll_batches`` runs from beat (every minute): it asks the API about the batches in
progress, then hands ended batches to ``harvest_job`` and runs with waiting requests
(retries) to ``submit_run``. Each of them is safe to run twice. Building or harvesting a
very large run may take hours (claims and leases are renewed as they go; a batch that has
been filling for 15 minutes is sent as it is); work left by a process that died is taken
up again where it stopped. A run or batch deleted before its task's turn came (its engagement or
documents deleted by an admin) leaves nothing to do. ``cancel_batch`` cancels, at the API, a batch
whose requests were deleted (``bulk.cancel``).

``submit_soon`` and ``queue_cancels`` queue these tasks; the receivers in ``bulk.signals`` call them when
``bulk.service`` and ``bulk.cancel`` say there is work (services never import this module).
"""

from __future__ import annotations

import logging

import anthropic
from celery import shared_task

from bulk import cancel, harvest, poll, submit
from bulk.models import BatchJob
from extraction.models import ExtractionRun
from extraction.outcome import EngineError

log = logging.getLogger(__name__)
LONG = {"soft_time_limit": 6 * 3600 - 300, "time_limit": 6 * 3600}  # large runs build and harvest for hours


@shared_task(name="bulk.tasks.submit_run", acks_late=True, **LONG)
def submit_run(run_id: int) -> str:
    run = ExtractionRun.objects.filter(pk=run_id).first()
    if run is None:
        return "gone (deleted)"
    jobs = submit.submit_pending(run)
    return f"{len(jobs)} batch(es): " + ", ".join(j.batch_id or j.state for j in jobs)


@shared_task(name="bulk.tasks.harvest_job", acks_late=True, **LONG)
def harvest_job(job_id: int) -> str:
    job = BatchJob.objects.filter(pk=job_id).first()
    if job is None:
        return "gone (deleted)"
    result = harvest.harvest(job)
    if result.taken and result.outcomes.get(harvest.REQUEUED):
        submit_run.delay(job.run_id)
    if not result.taken:
        return "not taken (harvested elsewhere)"
    return f"{result.lines} lines: {result.outcomes}" + (
        " (taken over by another harvest)" if result.superseded else ""
    )


@shared_task(name="bulk.tasks.poll_batches")
def poll_batches() -> str:
    result = poll.poll_active()
    for job_id in result.harvest:
        harvest_job.delay(job_id)
    for run_id in result.submit:
        submit_run.delay(run_id)
    return (
        f"polled {result.polled}, ended {len(result.ended)}, harvest {len(result.harvest)}, "
        f"submit {len(result.submit)}, recovered {result.recovered}, errors {len(result.errors)}, "
        f"settled {len(result.settled)}"
    )


@shared_task(name="bulk.tasks.cancel_batch", bind=True, max_retries=cancel.RETRIES)
def cancel_batch(self, batch_id: str) -> str:
    """Queued when a deletion of a batch's requests commits (``bulk.cancel``)."""
    try:
        return cancel.cancel_abandoned(batch_id)
    except EngineError:
        cancel.not_canceled(batch_id, "ANTHROPIC_API_KEY is not set")
    except anthropic.APIError as exc:
        if cancel.retryable(exc) and self.request.retries < self.max_retries:
            raise self.retry(countdown=cancel.backoff(self.request.retries)) from exc
        cancel.not_canceled(batch_id, poll.api_error_text(exc))
    return "not canceled"


def submit_soon(run_id: int) -> None:
    """Ask a worker to submit the run now; with the queue unreachable the beat's poll submits it
    later (``runs_waiting``), so the request that started it does not fail after saving it."""
    try:
        submit_run.delay(run_id)
    except Exception:
        log.exception("bulk run %s: the queue could not be reached; the next poll submits it", run_id)


def queue_cancels(batch_ids) -> None:
    """Ask a worker to cancel each of ``batch_ids`` (unless still wanted by then)."""
    for batch_id in batch_ids:
        try:
            cancel_batch.delay(batch_id)
        except Exception:  # the deletion has committed: say which batch to cancel, do not fail the request
            log.exception(
                "batch %s: its requests were deleted, but the queue could not be reached to cancel "
                "it; cancel it in the Claude Console",
                batch_id,
            )
