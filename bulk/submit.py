"""Submit a bulk run's pending requests as Message Batches.

``submit_pending(run)`` claims the run's pending items (under a lock on the run row,
so two submitters never send the same request twice), builds their requests one by
one (``build.Builder``), cuts them into batches at the API limits (``split``) and
creates each batch as soon as it is full: only one batch is held in memory.

Every batch is written as a ``BatchJob`` row, with its items pointing at it, BEFORE
the API call; the batch id is saved right after. A batch the API refuses sends its
requests back to pending (a 4xx refusal counts as a failed batch for each of them,
with the error text as the note of their next message).
"""
from __future__ import annotations

import logging
import time
from typing import Iterable

import anthropic
from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from bulk import retry
from bulk.build import Builder, Built
from bulk.models import BatchItem, BatchJob
from bulk.poll import apply_batch
from bulk.split import API_LIMITS, Limits, RequestTooLarge, Splitter, body_size, encoded_size
from extraction import runs
from extraction.models import ClauseTask, ExtractionRun

log = logging.getLogger(__name__)
LOAD_CHUNK = 500
SEND_AFTER_S = 15 * 60  # a batch being filled for this long is sent as it is (the API starts on it sooner)


def claim_pending(run) -> list[int]:
    """Ids of the run's pending items, now marked building (document order)."""
    with transaction.atomic():
        ExtractionRun.objects.select_for_update().filter(pk=run.pk).first()
        ids = list(BatchItem.objects.filter(run=run, state=BatchItem.State.PENDING)
                   .order_by("task__document_id", "id").values_list("id", flat=True))
        BatchItem.objects.filter(id__in=ids).update(state=BatchItem.State.BUILDING, claimed_at=timezone.now())
    return ids


def renew_claim(run) -> int:
    """Keep this submitter's claimed items fresh, so they never look abandoned (``poll.recover_stale``)."""
    return BatchItem.objects.filter(run=run, state=BatchItem.State.BUILDING).update(claimed_at=timezone.now())


def _items(ids: list[int]) -> Iterable[BatchItem]:
    for start in range(0, len(ids), LOAD_CHUNK):
        chunk = ids[start:start + LOAD_CHUNK]
        rows = (BatchItem.objects.filter(id__in=chunk)
                .select_related("task__document", "task__clause_type").defer("task__document__text"))
        by_id = {r.id: r for r in rows}
        yield from (by_id[i] for i in chunk if i in by_id)


def fail_items(items: list[BatchItem], error: str) -> None:
    """Fail items for a person to look at (and their tasks), with ``error``."""
    with transaction.atomic():
        BatchItem.objects.filter(id__in=[i.id for i in items]).update(
            state=BatchItem.State.FAILED, error=error[:4000], snapshot=None)
        ClauseTask.objects.filter(id__in=[i.task_id for i in items]).exclude(status=ClauseTask.Status.DONE).update(
            status=ClauseTask.Status.FAILED, error=error[:4000])


def submit_pending(run, *, client=None, limits: Limits = API_LIMITS, builder: Builder | None = None,
                   send_after_s: float = SEND_AFTER_S) -> list[BatchJob]:
    """Build and submit every pending request of ``run``; returns the BatchJobs created.

    A batch is sent when the next request would cross a limit, when building has filled it
    for ``send_after_s`` seconds, and at the end."""
    ids = claim_pending(run)
    if not ids:
        return []
    if client is None:
        from extraction.engines.anthropic import make_client

        client = make_client()
    builder = builder or Builder(run)
    splitter: Splitter[tuple[BatchItem, Built, int]] = Splitter(limits)
    jobs: list[BatchJob] = []
    opened = time.monotonic()
    try:
        for n, item in enumerate(_items(ids), 1):
            if n % LOAD_CHUNK == 0:
                renew_claim(run)
                if splitter.pending_bytes and time.monotonic() - opened > send_after_s:
                    jobs.append(send(run, splitter.flush(), client))
                    opened = time.monotonic()
            try:
                built = builder.build(item)
                size = encoded_size(built.request)
                if not splitter.fits_alone(size):
                    raise RequestTooLarge(f"its request is {size:,} bytes, over the batch limit of "
                                          f"{limits.max_bytes:,}")
            except Exception as exc:  # a document gone, an engine refusing: this request only
                log.exception("bulk run %s: could not build %s", run.pk, item.custom_id)
                fail_items([item], f"could not build the batch request: {type(exc).__name__}: {exc}")
                continue
            group = splitter.add((item, built, size), size)
            if group:
                jobs.append(send(run, group, client))
                opened = time.monotonic()
        group = splitter.flush()
        if group:
            jobs.append(send(run, group, client))
    finally:
        BatchItem.objects.filter(id__in=ids, state=BatchItem.State.BUILDING).update(
            state=BatchItem.State.PENDING, claimed_at=None)
    runs.refresh_status(ExtractionRun.objects.get(pk=run.pk))
    return jobs


def send(run, group: list[tuple[BatchItem, Built, int]], client) -> BatchJob:
    """Write the BatchJob and point its items at it, then create the batch through the API."""
    requests = [built.request for _, built, _ in group]
    size = body_size(n for _, _, n in group)
    items = [item for item, _, _ in group]
    with transaction.atomic():
        ExtractionRun.objects.select_for_update().filter(pk=run.pk).first()
        seq = (BatchJob.objects.filter(run=run).aggregate(m=Max("sequence"))["m"] or 0) + 1
        job = BatchJob.objects.create(run=run, sequence=seq, request_count=len(group), size_bytes=size,
                                      retries=sum(1 for item in items if item.batches))
        for item, built, _ in group:
            item.job, item.state, item.snapshot = job, BatchItem.State.SUBMITTED, built.snapshot
            item.batches += 1
        BatchItem.objects.bulk_update(items, ["job", "state", "snapshot", "batches"], batch_size=200)
        ClauseTask.objects.filter(id__in=[item.task_id for item in items]).update(
            status=ClauseTask.Status.RUNNING, attempts=F("attempts") + 1)
        runs.mark_running(run)
    try:
        batch = client.messages.batches.create(requests=requests)
    except anthropic.APIError as exc:
        refused(job, items, exc)
        return job
    BatchJob.objects.filter(pk=job.pk).update(batch_id=batch.id, submitted_at=timezone.now())
    job.batch_id = batch.id
    job.submitted_at = timezone.now()
    apply_batch(job, batch)
    log.info("bulk run %s: batch %s (%s) submitted with %d requests, %d bytes", run.pk, seq, batch.id,
             len(group), size)
    return job


def refused(job: BatchJob, items: list[BatchItem], exc: Exception) -> None:
    """The API did not take the batch: the job fails; its requests go back to pending (a 4xx
    refusal counts as one failed batch for each, with the API's message as their note)."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    err = (body or {}).get("error", {}) if isinstance(body, dict) else {}
    text = f"{err.get('type') or type(exc).__name__}: {err.get('message') or exc}"
    counts = isinstance(status, int) and 400 <= status < 500 and status != 429
    log.warning("batch %s of run %s refused: %s", job.sequence, job.run_id, text)
    with transaction.atomic():
        BatchJob.objects.filter(pk=job.pk).update(state=BatchJob.State.FAILED, error=text[:4000])
        job.state, job.error = BatchJob.State.FAILED, text
        failed: list[BatchItem] = []
        for item in items:
            item.batches = max(0, item.batches - 1)
            item.state = BatchItem.State.PENDING
            if counts:
                note = retry.failure_note("errored", "", error_type=err.get("type", ""),
                                          error_message=f"the batch was refused: {err.get('message') or exc}")
                decision = retry.decide("errored", item.failures_in_row, note)
                item.failures_in_row, item.error, item.last_result = decision.failures_in_row, decision.note, "refused"
                if decision.action == retry.FAIL:
                    failed.append(item)
                else:
                    item.snapshot = retry.add_note(item.snapshot, note)
        BatchItem.objects.bulk_update(items, ["batches", "state", "failures_in_row", "error", "last_result",
                                              "snapshot"], batch_size=200)
        if failed:
            fail_items(failed, failed[0].error)
