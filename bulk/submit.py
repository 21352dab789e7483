"""Submit a bulk run's pending requests as Message Batches.

``submit_pending(run)`` claims the run's pending items (under a lock on the run row,
so two submitters never send the same request twice), builds their requests one by
one (``build.Builder``), cuts them into batches at the API limits (``split``) and
creates each batch as soon as it is full. Memory does not grow with a batch: each request
is encoded as soon as it is built and appended to the batch's body on disk (``body``),
its conversation snapshot is written to its row, and only ids are kept.

Every batch is written as a ``BatchJob`` row, with its items pointing at it, BEFORE
the API call; the batch id is saved right after. A batch the API refuses sends its
requests back to pending (a 4xx refusal counts as a failed batch for each of them,
with the error text as the note of their next message). A creation that got no answer may
have been taken all the same: the batch the API took is looked for first (``adopt``). A request sent again
after a refusal counts as a retry of the batch it goes in (``BatchJob.retries``), as after a failed batch.

A run deleted while it is being submitted (its engagement deleted by an admin) ends the submission
quietly; a batch whose run, or all of whose documents, were deleted while it was being sent (the
deletion could not name a batch that had no id yet) is canceled (``bulk.cancel``), not run for nobody.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import NamedTuple

import anthropic
from anthropic.types.messages import MessageBatch
from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from bulk import adopt, cancel, retry
from bulk.body import BatchBody
from bulk.build import Builder
from bulk.models import BatchItem, BatchJob
from bulk.poll import api_error_text, apply_batch
from bulk.split import API_LIMITS, Limits, RequestTooLarge, Splitter, encode
from extraction import run_status
from extraction.agent.engine import make_client
from extraction.models import ClauseTask, ExtractionRun
from extraction.outcome import EngineError

log = logging.getLogger(__name__)
LOAD_CHUNK = 500
RENEW_CLAIM_S = 60  # claimed items are marked fresh this often (poll.STALE_AFTER releases them after 30 min)
SEND_AFTER_S = 15 * 60  # a batch being filled for this long is sent as it is (the API starts on it sooner)
REFUSED = "refused"  # the last_result of an item whose batch the API refused


def claim_pending(run: ExtractionRun) -> list[int]:
    """Ids of the run's pending items, now marked building (document order)."""
    with transaction.atomic():
        ExtractionRun.objects.select_for_update().filter(pk=run.pk).first()
        ids = list(
            BatchItem.objects.filter(run=run, state=BatchItem.State.PENDING)
            .order_by("task__document_id", "id")
            .values_list("id", flat=True)
        )
        BatchItem.objects.filter(id__in=ids).update(state=BatchItem.State.BUILDING, claimed_at=timezone.now())
    return ids


def renew_claim(run: ExtractionRun) -> int:
    """Keep this submitter's claimed items fresh, so they never look abandoned (``poll.recover_stale``)."""
    return BatchItem.objects.filter(run=run, state=BatchItem.State.BUILDING).update(claimed_at=timezone.now())


def _items(ids: list[int]) -> Iterable[BatchItem]:
    for start in range(0, len(ids), LOAD_CHUNK):
        chunk = ids[start : start + LOAD_CHUNK]
        rows = (
            BatchItem.objects.filter(id__in=chunk)
            .select_related("task__document", "task__clause_type")
            .defer("task__document__text")
        )
        by_id = {r.id: r for r in rows}
        yield from (by_id[i] for i in chunk if i in by_id)


def fail_items(items: list[BatchItem], error: str) -> None:
    """Fail items for a person to look at (and their tasks), with ``error``."""
    with transaction.atomic():
        BatchItem.objects.filter(id__in=[i.id for i in items]).update(
            state=BatchItem.State.FAILED, error=error[:4000], snapshot=None
        )
        ClauseTask.objects.filter(id__in=[i.task_id for i in items]).exclude(
            status=ClauseTask.Status.DONE
        ).update(status=ClauseTask.Status.FAILED, error=error[:4000])


class RunGone(Exception):
    """The run was deleted while its requests were being submitted."""


class Member(NamedTuple):
    id: int
    retry: bool  # it was in an earlier batch, or in one the API refused


class Outbox:
    """The batch being filled. The splitter decides where it ends (the API limits); its requests'
    bytes go to a ``BatchBody`` on disk and their snapshots to their rows every ``LOAD_CHUNK``
    requests, so only ids are held, whatever the batch's size."""

    def __init__(self, run: ExtractionRun, client, limits: Limits):
        self.run, self.client = run, client
        self.splitter: Splitter[Member] = Splitter(limits)
        self.body = BatchBody()
        self.snapshots: dict[int, dict] = {}
        self.jobs: list[BatchJob] = []
        self.opened = time.monotonic()

    @property
    def age(self) -> float:
        """Seconds since the batch being filled got its first request (0 when empty)."""
        return time.monotonic() - self.opened if self.body.count else 0.0

    def add(self, item: BatchItem, snapshot: dict, encoded: bytes) -> None:
        sent_before = item.batches > 0 or item.last_result == REFUSED  # a refused batch counts as a try
        group = self.splitter.add(Member(item.pk, sent_before), len(encoded))
        if group:
            self._send(group)
        if not self.body.count:
            self.opened = time.monotonic()
        self.body.add(encoded)
        self.snapshots[item.pk] = snapshot
        if len(self.snapshots) >= LOAD_CHUNK:
            self._save_snapshots()

    def send(self) -> None:
        """Send the batch being filled, if it has requests."""
        group = self.splitter.flush()
        if group:
            self._send(group)

    def close(self) -> None:
        self.body.close()

    def _send(self, group: list[Member]) -> None:
        self._save_snapshots()
        body, self.body = self.body, BatchBody()
        with body:
            self.jobs.append(send(self.run, group, body, self.client))

    def _save_snapshots(self) -> None:
        """The conversation each built request continues. Written while the items are still being
        built: one that goes back to pending is rebuilt from it into the same request."""
        rows = [BatchItem(pk=pk, snapshot=snapshot) for pk, snapshot in self.snapshots.items()]
        BatchItem.objects.bulk_update(rows, ["snapshot"], batch_size=100)
        self.snapshots = {}


def submit_pending(
    run: ExtractionRun,
    *,
    client=None,
    limits: Limits = API_LIMITS,
    builder: Builder | None = None,
    send_after_s: float = SEND_AFTER_S,
) -> list[BatchJob]:
    """Build and submit every pending request of ``run``; returns the BatchJobs created.

    A batch is sent when the next request would cross a limit, when building has filled it
    for ``send_after_s`` seconds, and at the end."""
    if not BatchItem.objects.filter(run=run, state=BatchItem.State.PENDING).exists():
        run_status.refresh_status(run)  # its documents may have been deleted, their requests with them
        return []
    if client is None:  # before claiming: a missing key leaves the items pending, not claimed for 30 minutes
        try:
            client = make_client()
        except EngineError as exc:  # said on the run's page, not only in the worker's log
            ExtractionRun.objects.filter(pk=run.pk, finished_at__isnull=True).update(
                error=f"Its requests could not be sent: {exc}. "
                "They wait: once that is fixed, the next poll sends them."
            )
            raise
    ExtractionRun.objects.filter(pk=run.pk, finished_at__isnull=True).exclude(error="").update(error="")
    builder = builder or Builder(run, client=client)
    ids = claim_pending(run)
    if not ids:
        return []
    outbox = Outbox(run, client, limits)
    renewed = time.monotonic()
    try:
        for n, item in enumerate(_items(ids), 1):
            if time.monotonic() - renewed > RENEW_CLAIM_S:  # by time: a slow build must not look abandoned
                renew_claim(run)
                renewed = time.monotonic()
            if n % LOAD_CHUNK == 0 and outbox.age > send_after_s:
                outbox.send()
            try:
                built = builder.build(item)
                encoded = encode(built.request)
                if not outbox.splitter.fits_alone(len(encoded)):
                    raise RequestTooLarge(
                        f"its request is {len(encoded):,} bytes, over the batch limit of {limits.max_bytes:,}"
                    )
            except Exception as exc:  # a document gone, an engine refusing: this request only
                log.exception("bulk run %s: could not build %s", run.pk, item.custom_id)
                fail_items([item], f"could not build the batch request: {type(exc).__name__}: {exc}")
                continue
            outbox.add(item, built.snapshot, encoded)
        outbox.send()
    except RunGone:
        log.info("bulk run %s was deleted while its requests were submitted; nothing left to send", run.pk)
        return outbox.jobs
    finally:
        outbox.close()
        BatchItem.objects.filter(id__in=ids, state=BatchItem.State.BUILDING).update(
            state=BatchItem.State.PENDING, claimed_at=None
        )
    fresh = ExtractionRun.objects.filter(pk=run.pk).first()
    if fresh is not None:  # (deleted after its last batch was sent)
        run_status.refresh_status(fresh)
    return outbox.jobs


def send(run: ExtractionRun, group: list[Member], body: BatchBody, client) -> BatchJob:
    """Write the BatchJob and point its items at it, then create the batch through the API, the
    body streamed from its file."""
    ids = [m.id for m in group]
    with transaction.atomic():
        if ExtractionRun.objects.select_for_update().filter(pk=run.pk).first() is None:
            raise RunGone(run.pk)
        seq = (BatchJob.objects.filter(run=run).aggregate(m=Max("sequence"))["m"] or 0) + 1
        job = BatchJob.objects.create(
            run=run,
            sequence=seq,
            request_count=len(ids),
            size_bytes=body.size,
            retries=sum(m.retry for m in group),
        )
        BatchItem.objects.filter(id__in=ids).update(
            job=job, state=BatchItem.State.SUBMITTED, batches=F("batches") + 1
        )
        ClauseTask.objects.filter(batch_item__job=job).update(
            status=ClauseTask.Status.RUNNING, attempts=F("attempts") + 1
        )
        run_status.mark_running(run)
    try:
        # ``messages.batches.create`` takes the requests as dicts only; this is the same POST. Sent once:
        # the API has no idempotency key, so the SDK's retry of a POST that timed out could create a
        # second batch. A batch turned away waits for the next poll; one that got no answer is looked for.
        batch = client.post(
            "/v1/messages/batches",
            cast_to=MessageBatch,
            content=body,
            options={"headers": {"Content-Length": str(body.size)}, "max_retries": 0},
        )
    except anthropic.APIError as exc:
        found = adopt.find(client, job) if adopt.may_have_been_taken(exc) else adopt.Found()
        if found.batch is None:
            refused(job, exc, note=adopt.doubt_note(found.doubt) if found.doubt else "")
            return job
        log.warning(
            "batch %s of run %s: its creation got no answer (%s), and the API had taken it: %s is followed",
            seq,
            run.pk,
            api_error_text(exc),
            found.batch.id,
        )
        batch = found.batch
    if not BatchJob.objects.filter(pk=job.pk, state=BatchJob.State.SUBMITTING, batch_id="").update(
        batch_id=batch.id, submitted_at=timezone.now()
    ):
        if not BatchJob.objects.filter(pk=job.pk).exists():  # its run was deleted meanwhile
            return abandoned(job, batch)
        return too_late(job, batch, client)
    job.batch_id = batch.id
    job.submitted_at = timezone.now()
    apply_batch(job, batch)
    log.info(
        "bulk run %s: batch %s (%s) submitted with %d requests, %d bytes",
        run.pk,
        seq,
        batch.id,
        len(ids),
        body.size,
    )
    if not BatchItem.objects.filter(job=job, state=BatchItem.State.SUBMITTED).exists():  # its documents went
        return abandoned(job, batch)
    return job


def abandoned(job: BatchJob, batch) -> BatchJob:
    """The API took the batch after its run, or all of its documents, had been deleted: nothing waits for
    its results, so it is canceled (by a worker, tried again if the API cannot take it)."""
    log.warning(
        "batch %s of run %s (%s) was taken by the API after its requests had been deleted: it is canceled",
        job.sequence,
        job.run_id,
        batch.id,
    )
    job.batch_id = batch.id
    cancel.request_cancel([batch.id])
    return job


def too_late(job: BatchJob, batch, client) -> BatchJob:
    """The API took the batch after the poll had given its job up as lost (``poll.recover_stale``): its
    requests went back to pending and are sent in another batch, so this one is canceled rather than
    run, unfollowed, and billed a second time."""
    try:
        client.messages.batches.cancel(batch.id)
        what = "so it was canceled"
    except anthropic.APIError as exc:
        what = f"and it could not be canceled ({api_error_text(exc)}): cancel it in the Claude Console"
    log.warning(
        "batch %s of run %s (%s) was taken by the API after it had been given up as lost: %s",
        job.sequence,
        job.run_id,
        batch.id,
        what,
    )
    note = (
        "The API took this batch only after it had been given up as lost and its requests sent again, "
        f"{what}. Requests it had already processed may be billed."
    )
    BatchJob.objects.filter(pk=job.pk).update(batch_id=batch.id, submitted_at=timezone.now(), error=note)
    job.refresh_from_db()
    return job


def refused(job: BatchJob, exc: Exception, *, note: str = "") -> None:
    """The API did not take the batch (or it cannot be told which batch it took, said in ``note``): the job
    fails; its requests go back to pending (a 4xx refusal counts as one failed batch for each, with the
    API's message as their note)."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    err = (body or {}).get("error", {}) if isinstance(body, dict) else {}
    text = f"{api_error_text(exc)}. {note}" if note else api_error_text(exc)
    counts = isinstance(status, int) and 400 <= status < 500 and status != 429
    log.warning("batch %s of run %s refused: %s", job.sequence, job.run_id, text)
    with transaction.atomic():
        BatchJob.objects.filter(pk=job.pk).update(state=BatchJob.State.FAILED, error=text[:4000])
        job.state, job.error = BatchJob.State.FAILED, text
        ids = list(
            BatchItem.objects.filter(job=job, state=BatchItem.State.SUBMITTED).values_list("id", flat=True)
        )
        failed: list[BatchItem] = []
        for start in range(0, len(ids), LOAD_CHUNK):
            items = list(BatchItem.objects.filter(id__in=ids[start : start + LOAD_CHUNK]))
            for item in items:
                item.batches = max(0, item.batches - 1)
                item.state, item.last_result = BatchItem.State.PENDING, REFUSED  # its next batch is a retry
                if counts:
                    note = retry.failure_note(
                        "errored",
                        "",
                        error_type=err.get("type", ""),
                        error_message=f"the batch was refused: {err.get('message') or exc}",
                    )
                    decision = retry.decide("errored", item.failures_in_row, note)
                    item.failures_in_row, item.error = decision.failures_in_row, decision.note
                    if decision.action == retry.FAIL:
                        failed.append(item)
                    else:
                        item.snapshot = retry.add_note(item.snapshot, note)
            BatchItem.objects.bulk_update(
                items,
                ["batches", "state", "failures_in_row", "error", "last_result", "snapshot"],
                batch_size=200,
            )
        if failed:
            fail_items(failed, failed[0].error)
