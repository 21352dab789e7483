"""Follow submitted batches: processing state and request counts, as the API reports them.

``poll_active()`` (the beat task's body) asks the API about every batch still
processing, marks the ones that ended, sends stale work back, and says what to do
next: which jobs to harvest and which runs have requests waiting for a batch. It
never harvests or submits itself, so it stays quick. A run with nothing left to send,
follow or harvest gets its status from its tasks (``settle_idle``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta

import anthropic
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from bulk.models import BatchItem, BatchJob
from extraction import run_status
from extraction.agent.engine import make_client
from extraction.models import ExtractionRun

log = logging.getLogger(__name__)
# Submitters renew their claims every minute, harvests their lease at each group of lines: work
# untouched for this long was left by a process that died.
STALE_AFTER = timedelta(minutes=30)
State = BatchJob.State
_STATES = {"in_progress": State.IN_PROGRESS, "canceling": State.CANCELING, "ended": State.ENDED}


def lost_note(created_at) -> str:
    """What the run page says of a batch lost before its id was saved."""
    return (
        "The submitting process stopped before this batch's id was saved: its requests are sent again in a "
        "later batch. If the API had already taken this batch, it is not followed here and its cost is not "
        f"counted; look in the Claude Console for a batch created at {created_at:%Y-%m-%d %H:%M} UTC "
        "and cancel it."
    )


def api_error_text(exc: BaseException) -> str:
    """``exc`` in a few words: the API's error type and message, or the exception's."""
    body = getattr(exc, "body", None)
    err = (body or {}).get("error", {}) if isinstance(body, dict) else {}
    err = err if isinstance(err, dict) else {}
    return f"{err.get('type') or type(exc).__name__}: {err.get('message') or exc}"


def apply_batch(job: BatchJob, batch) -> BatchJob:
    """Store what the API says of ``batch`` (a ``MessageBatch``) on ``job`` (an earlier poll's error goes)."""
    counts = batch.request_counts
    fields = {
        "processing_status": batch.processing_status,
        "polled_at": timezone.now(),
        "error": "",
        "n_processing": counts.processing,
        "n_succeeded": counts.succeeded,
        "n_errored": counts.errored,
        "n_canceled": counts.canceled,
        "n_expired": counts.expired,
        "expires_at": batch.expires_at,
        "ended_at": batch.ended_at,
    }
    for key, value in fields.items():
        setattr(job, key, value)
    BatchJob.objects.filter(pk=job.pk).update(**fields)
    new_state = _STATES.get(batch.processing_status)
    # only move forward: a job being harvested (or harvested) stays so
    if new_state and BatchJob.objects.filter(
        pk=job.pk, state__in=[State.SUBMITTING, State.IN_PROGRESS, State.CANCELING]
    ).update(state=new_state):
        job.state = new_state
    return job


def refresh(job: BatchJob, client) -> BatchJob:
    return apply_batch(job, client.messages.batches.retrieve(job.batch_id))


def recover_stale(now=None) -> dict:
    """Work left behind by a process that died: claimed items go back to pending; a job that never
    got its batch id is marked lost (its requests are sent again; if the API had taken it, that
    batch is not followed); a harvest that stopped is taken up again by ``to_harvest``."""
    cutoff = (now or timezone.now()) - STALE_AFTER
    items = BatchItem.objects.filter(state=BatchItem.State.BUILDING, claimed_at__lt=cutoff).update(
        state=BatchItem.State.PENDING, claimed_at=None
    )
    lost = 0
    for job in BatchJob.objects.filter(state=State.SUBMITTING, batch_id="", created_at__lt=cutoff):
        with transaction.atomic():
            if BatchJob.objects.filter(pk=job.pk, state=State.SUBMITTING, batch_id="").update(
                state=State.LOST, error=lost_note(job.created_at)
            ):
                lost += 1
                BatchItem.objects.filter(job=job, state=BatchItem.State.SUBMITTED).update(
                    state=BatchItem.State.PENDING
                )
    return {"items_released": items, "jobs_lost": lost}


def to_harvest(now=None) -> list[int]:
    cutoff = (now or timezone.now()) - STALE_AFTER
    return list(
        BatchJob.objects.filter(
            Q(state=State.ENDED) | Q(state=State.HARVESTING, harvest_started_at__lt=cutoff)
        )
        .order_by("id")
        .values_list("id", flat=True)
    )


def runs_waiting() -> list[int]:
    """Bulk runs with requests waiting for a batch."""
    return list(
        ExtractionRun.objects.filter(batch_items__state=BatchItem.State.PENDING)
        .distinct()
        .order_by("id")
        .values_list("id", flat=True)
    )


def idle_runs() -> list[int]:
    """Claude bulk runs still open with no request pending, being built or submitted and no batch to follow
    or harvest: nothing will ever refresh their status again (the documents of their last waiting requests
    were deleted after the last harvest had refreshed it)."""
    busy_items = BatchItem.objects.filter(
        run=OuterRef("pk"),
        state__in=[BatchItem.State.PENDING, BatchItem.State.BUILDING, BatchItem.State.SUBMITTED],
    )
    busy_jobs = BatchJob.objects.filter(run=OuterRef("pk"), state__in=BatchJob.ACTIVE)
    return list(
        ExtractionRun.objects.filter(
            mode=ExtractionRun.Mode.BATCH,
            engine="anthropic",
            status__in=[ExtractionRun.Status.QUEUED, ExtractionRun.Status.RUNNING],
        )
        .exclude(Exists(busy_items))
        .exclude(Exists(busy_jobs))
        .order_by("id")
        .values_list("id", flat=True)
    )


def settle_idle() -> list[int]:
    """Refresh the status of the ``idle_runs`` (done, or failed with the reason); returns their ids."""
    ids = idle_runs()
    for run in ExtractionRun.objects.filter(pk__in=ids):
        run_status.refresh_status(run)
    return ids


@dataclass
class PollResult:
    polled: int = 0
    ended: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    harvest: list[int] = field(default_factory=list)
    submit: list[int] = field(default_factory=list)
    recovered: dict = field(default_factory=dict)
    settled: list[int] = field(
        default_factory=list
    )  # runs with nothing left in flight, their status refreshed


def poll_active(client=None) -> PollResult:
    out = PollResult(recovered=recover_stale())
    # SUBMITTING with a batch id: its submitter stopped after the API took the batch; polling moves it on
    active = list(
        BatchJob.objects.filter(state__in=[State.SUBMITTING, State.IN_PROGRESS, State.CANCELING]).exclude(
            batch_id=""
        )
    )
    if active and client is None:
        client = make_client()
    for job in active:
        try:
            refresh(job, client)
            out.polled += 1
            if job.state == State.ENDED:
                out.ended.append(job.pk)
        except anthropic.APIError as exc:  # try again at the next poll; the run page says so meanwhile
            log.warning("polling batch %s failed: %s", job.batch_id, exc)
            out.errors.append(f"{job.batch_id}: {exc}")
            BatchJob.objects.filter(pk=job.pk).update(
                error=f"The API could not be asked about this batch ({api_error_text(exc)}); "
                "it is asked again every minute."
            )
    out.harvest = to_harvest()
    out.submit = runs_waiting()
    out.settled = settle_idle()
    return out
