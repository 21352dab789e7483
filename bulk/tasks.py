"""Celery tasks of bulk runs: thin wrappers around ``submit``, ``poll`` and ``harvest``.

``poll_batches`` runs from beat (every minute): it asks the API about the batches in
progress, then hands ended batches to ``harvest_job`` and runs with waiting requests
(retries) to ``submit_run``. Each of them is safe to run twice. Building or harvesting a
very large run may take hours (claims and leases are renewed as they go; a batch that has
been filling for 15 minutes is sent as it is); work left by a process that died is taken
up again where it stopped.
"""
from __future__ import annotations

from celery import shared_task

from bulk import harvest, poll, submit
from bulk.models import BatchJob
from extraction.models import ExtractionRun


LONG = {"soft_time_limit": 6 * 3600 - 300, "time_limit": 6 * 3600}  # large runs build and harvest for hours


@shared_task(name="bulk.tasks.submit_run", acks_late=True, **LONG)
def submit_run(run_id: int) -> str:
    run = ExtractionRun.objects.get(pk=run_id)
    jobs = submit.submit_pending(run)
    return f"{len(jobs)} batch(es): " + ", ".join(j.batch_id or j.state for j in jobs)


@shared_task(name="bulk.tasks.harvest_job", acks_late=True, **LONG)
def harvest_job(job_id: int) -> str:
    job = BatchJob.objects.get(pk=job_id)
    result = harvest.harvest(job)
    if result.taken and result.outcomes.get(harvest.REQUEUED):
        submit_run.delay(job.run_id)
    if not result.taken:
        return "not taken (harvested elsewhere)"
    return f"{result.lines} lines: {result.outcomes}" + (" (taken over by another harvest)" if result.superseded else "")


@shared_task(name="bulk.tasks.poll_batches")
def poll_batches() -> str:
    result = poll.poll_active()
    for job_id in result.harvest:
        harvest_job.delay(job_id)
    for run_id in result.submit:
        submit_run.delay(run_id)
    return (f"polled {result.polled}, ended {len(result.ended)}, harvest {len(result.harvest)}, "
            f"submit {len(result.submit)}, recovered {result.recovered}, errors {len(result.errors)}")
