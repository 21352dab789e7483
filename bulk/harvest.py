"""Harvest an ended batch: stream its results file, one line at a time, into clauses.

Memory stays flat whatever the file's size: ``results.stream`` decodes the JSONL
body line by line from the HTTP stream (a line that cannot be read is passed over and
its request goes to the next batch; a download cut mid-line is taken up again at the
next poll), lines are handled in groups of
``GROUP_LINES`` and dropped, and only a few recent documents are kept loaded.

Each ``succeeded`` line goes back into the agent that built its request (the
session reopened from the item's snapshot, the message fed through a ``Relay``):
the citations are verified exactly as in the synchronous path, and the outcome is
stored with ``extraction.persist.save_outcome``. When the agent wants another turn
(a retry after a failed verification, with the verifier's errors in the next
message), that turn goes into the next batch. ``max_tokens`` is checkpointed first
(the agent doubles the output budget) and resumed from CASE_FACTS in the next batch.
``errored`` / ``expired`` / ``canceled`` go into the next batch with the error text
in their next message; three failed batches in a row fail the request for a person.

A stored clause needs no ``Checkpoint`` write: each request is its own conversation, and
the item (done) with its ``Extraction`` row is the record of progress; a max_tokens stop
is checkpointed (CASE_FACTS, the conversation with its raised budget).

Lines are applied in groups of ``GROUP_LINES``, one transaction per group with a
savepoint per line: the group's items are locked in one query, its lines are taken
document by document (results come back in any order; each document is loaded once
per group, not once per line), the job's counters and tokens and the run's tokens
move in the same transaction as the lines they count, and a crash loses at most one
group, which the next harvest applies again.

Idempotent: a line is applied only while its item is ``submitted`` in this job, under
a row lock, so harvesting a file twice (or a crashed harvest taken up again) adds
nothing twice; ``save_outcome`` is itself keyed. A succeeded line whose request is gone (its
document deleted mid-run) is billed all the same: its tokens are counted once (``count_gone``).

One harvest at a time: ``take`` gives the harvest a lease (a new token on the job's row).
A harvest silent for ``poll.STALE_AFTER`` (a stalled download) is handed to another, which
takes a new lease. Each group, and the end, first renews the lease with a conditional
UPDATE that holds the job's row until the group commits (so a takeover waits for the group,
and then finds the lease fresh); a harvest whose lease was taken stops there, writing nothing:
it neither applies lines, nor sends requests on, nor marks the batch harvested or hands it
back under the newer harvest's feet.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from bulk import results as result_file
from bulk import retry
from bulk.build import Builder
from bulk.custom_ids import parse
from bulk.models import BatchItem, BatchJob
from bulk.poll import STALE_AFTER, api_error_text
from bulk.relay import NextRequest, Relay
from extraction import checkpoints, run_status
from extraction.agent.case_facts import CaseFacts
from extraction.agent.engine import make_client
from extraction.catalog.sync import as_plain
from extraction.closest import with_closest
from extraction.models import ClauseTask, ExtractionRun
from extraction.outcome import FAILED, Interrupted
from extraction.persist import save_outcome
from extraction.usage import Usage, cost_usd

log = logging.getLogger(__name__)
STORED, REQUEUED, FAILED_ITEM, SKIPPED = "stored", "requeued", "failed", "skipped"
GROUP_LINES = 500
_COUNTER = {STORED: "n_stored", REQUEUED: "n_requeued", FAILED_ITEM: "n_failed"}


@dataclass
class HarvestResult:
    job_id: int
    taken: bool = True
    lines: int = 0
    outcomes: dict = field(default_factory=dict)  # stored / requeued / failed / skipped -> count
    missing: int = 0  # submitted requests with no line in the file
    unreadable: int = 0  # lines of the file that were not results
    superseded: bool = False  # another harvest took the batch over; this one stopped

    def add(self, label: str) -> None:
        self.outcomes[label] = self.outcomes.get(label, 0) + 1


@dataclass
class Tally:
    """What one group of lines adds to the job's counters and to the job's and run's tokens."""

    counts: dict = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)

    def count(self, label: str) -> None:
        if label != SKIPPED:
            self.counts["n_harvested"] = self.counts.get("n_harvested", 0) + 1
        if label in _COUNTER:
            self.counts[_COUNTER[label]] = self.counts.get(_COUNTER[label], 0) + 1

    def flush(self, job: BatchJob, run: ExtractionRun) -> None:
        updates = {name: F(name) + n for name, n in self.counts.items()}
        u = self.usage
        tokens = {
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cache_read_tokens": u.cache_read_tokens,
            "cache_write_tokens": u.cache_write_tokens,
        }
        usage = {k: F(k) + v for k, v in tokens.items() if v}
        if usage:
            usage["cost_usd"] = F("cost_usd") + cost_usd(u, run.model, batch=True)
            ExtractionRun.objects.filter(pk=run.pk).update(**usage)
        updates.update(usage)
        if updates:
            BatchJob.objects.filter(pk=job.pk).update(**updates)
        self.counts, self.usage = {}, Usage()


class LeaseLost(Exception):
    """Another harvest took the batch over (this one was silent too long)."""


def take(job: BatchJob, *, force: bool = False) -> str:
    """Claim ``job`` for harvesting (compare-and-set on its state); returns the new lease, or "" when
    the job is not to be harvested (or another harvest holds it and is not stale)."""
    states = [BatchJob.State.ENDED]
    if force:
        states += [BatchJob.State.HARVESTING, BatchJob.State.HARVESTED]
    q = Q(state__in=states)
    if not force:
        q |= Q(state=BatchJob.State.HARVESTING, harvest_started_at__lt=timezone.now() - STALE_AFTER)
    lease = uuid.uuid4().hex
    taken = BatchJob.objects.filter(q, pk=job.pk).update(
        state=BatchJob.State.HARVESTING, harvest_lease=lease, harvest_started_at=timezone.now()
    )
    return lease if taken else ""


def hold(job: BatchJob, lease: str) -> None:
    """Renew ``lease`` before a write that matters (in the writes' transaction: the job's row stays locked
    until they commit), or raise ``LeaseLost``. A live harvest never looks stale to the poller."""
    if not BatchJob.objects.filter(pk=job.pk, state=BatchJob.State.HARVESTING, harvest_lease=lease).update(
        harvest_started_at=timezone.now()
    ):
        raise LeaseLost(f"batch {job.batch_id} was taken over by another harvest")


def harvest(
    job: BatchJob,
    *,
    client=None,
    results: Iterable | None = None,
    builder: Builder | None = None,
    force: bool = False,
) -> HarvestResult:
    """Apply every result line of ``job``. ``results`` (an iterable of ``MessageBatchIndividualResponse``)
    defaults to the stream of the batch's results file (``results.stream``); ``force`` harvests again a
    job already harvested (it adds nothing: every line is skipped)."""
    out = HarvestResult(job.pk)
    lease = take(job, force=force)
    if not lease:
        out.taken = False
        return out
    job.refresh_from_db()
    run = ExtractionRun.objects.select_related("engagement").get(pk=job.run_id)
    builder = builder or Builder(run)
    try:
        if results is None:
            if client is None:
                client = make_client()
            results = result_file.stream(client, job.batch_id)
        lines = iter(results)
        while group := list(islice(lines, GROUP_LINES)):
            tally = Tally()
            with transaction.atomic():
                hold(job, lease)
                items = _locked_items(job, [line.custom_id for line in group])
                count_gone(job, run, group, items, tally)
                for line in _by_document(group, items):
                    out.lines += 1
                    label = apply_line(job, run, line, builder, tally, items.get(line.custom_id))
                    out.add(label)
                    tally.count(label)
                tally.flush(job, run)
    except LeaseLost:
        return _superseded(job, out)
    except BaseException as exc:  # the stream broke (or a worker stops): the next poll takes the job up again
        BatchJob.objects.filter(pk=job.pk, state=BatchJob.State.HARVESTING, harvest_lease=lease).update(
            state=BatchJob.State.ENDED,
            error=f"Its results could not be read to the end ({api_error_text(exc)}); "
            "the next poll tries again.",
        )
        raise
    finally:
        close = getattr(results, "close", None)
        if close:
            close()
    out.unreadable = getattr(results, "unreadable", 0)
    try:
        _settle(job, run, lease, out)
    except LeaseLost:
        return _superseded(job, out)
    finish(run)
    log.info("harvested batch %s (%s): %s", job.sequence, job.batch_id, out.outcomes)
    return out


def _superseded(job: BatchJob, out: HarvestResult) -> HarvestResult:
    log.warning(
        "harvest of batch %s (%s) stopped: another harvest took it over after %d lines",
        job.sequence,
        job.batch_id,
        out.lines,
    )
    out.superseded = True
    return out


def _settle(job: BatchJob, run: ExtractionRun, lease: str, out: HarvestResult) -> None:
    """The end of the file: requests with no line go to the next batch, and the job is harvested."""
    tally = Tally()
    with transaction.atomic():
        hold(job, lease)
        missing = BatchItem.objects.filter(job=job, state=BatchItem.State.SUBMITTED).only("id")
        for item in missing.iterator(chunk_size=GROUP_LINES):
            out.missing += 1
            label = apply_failure(
                job,
                item.pk,
                "errored",
                error_type="missing_result",
                error_message="the results file had no line for this request",
            )
            out.add(label)
            tally.count(label)
        tally.flush(job, run)
        done = {"state": BatchJob.State.HARVESTED, "harvested_at": timezone.now(), "error": ""}
        if out.unreadable:
            done["error"] = (
                f"{out.unreadable} line{'s' if out.unreadable > 1 else ''} of the results file could "
                "not be read; their requests went to the next batch"
            )
        BatchJob.objects.filter(pk=job.pk).update(**done)


def finish(run: ExtractionRun) -> None:
    run_status.refresh_status(ExtractionRun.objects.get(pk=run.pk))


def _items_for_update(job: BatchJob):
    """The job's items still waiting for their result, locked, with their task, document (no text) and
    clause type."""
    return (
        BatchItem.objects.select_for_update(of=("self",))
        .filter(job=job, state=BatchItem.State.SUBMITTED)
        .select_related("task__document", "task__clause_type")
        .defer("task__document__text")
    )


def _locked_items(job: BatchJob, custom_ids: list[str]) -> dict[str, BatchItem]:
    """The items of one group of lines, locked in one query, by custom id (a line with none is skipped)."""
    return {item.custom_id: item for item in _items_for_update(job).filter(custom_id__in=custom_ids)}


def count_gone(
    job: BatchJob, run: ExtractionRun, group: list, items: dict[str, BatchItem], tally: Tally
) -> None:
    """Succeeded lines of the group whose request is gone (its document was deleted mid-run, and its item
    with it): the API billed them all the same, so their tokens are counted, once (the job keeps their
    custom ids: a harvest taken up again, or forced, meets them again)."""
    lines = {
        line.custom_id: line
        for line in group
        if line.custom_id not in items and line.result.type == "succeeded" and _of_run(line.custom_id, run)
    }
    if not lines:
        return
    present = set(BatchItem.objects.filter(custom_id__in=list(lines)).values_list("custom_id", flat=True))
    counted = set(BatchJob.objects.filter(pk=job.pk).values_list("gone_counted", flat=True).get())
    gone = [cid for cid in lines if cid not in present and cid not in counted]
    for cid in gone:
        tally.usage = tally.usage + Usage().add(lines[cid].result.message.usage)
    if gone:
        BatchJob.objects.filter(pk=job.pk).update(gone_counted=sorted(counted | set(gone)))


def _of_run(cid: str, run: ExtractionRun) -> bool:
    try:
        return parse(cid).run_id == run.pk
    except ValueError:
        return False


def _by_document(group: list, items: dict[str, BatchItem]) -> list:
    """The group's lines, those of one document together (each document is loaded once per group), in
    the file's order within a document."""

    def document_of(line) -> int:
        item = items.get(line.custom_id)
        return item.task.document_id if item is not None else 0

    return sorted(group, key=document_of)


def apply_line(
    job: BatchJob, run: ExtractionRun, line: Any, builder: Builder, tally: Tally, item: BatchItem | None
) -> str:
    """One line of the results file (``{custom_id, result}``), in a savepoint; ``item`` is its item, locked
    (None when it is not waiting for a result in this job). Returns what became of the line."""
    result = line.result
    kind = result.type
    if item is None or item.state != BatchItem.State.SUBMITTED:  # (a line given twice in one group)
        return SKIPPED
    try:
        with transaction.atomic():
            if kind == "succeeded":
                usage = Usage()
                label = _succeeded(job, run, item, result.message, builder, usage)
                tally.usage = tally.usage + usage
                return label
            err = getattr(getattr(result, "error", None), "error", None)
            return _failed(
                job,
                item,
                kind,
                error_type=getattr(err, "type", "") or "",
                error_message=getattr(err, "message", "") or "",
            )
    except Exception as exc:  # one bad line never stops the harvest: it goes to the next batch
        log.exception("batch %s: could not apply the result for %s", job.batch_id, line.custom_id)
        if kind == "succeeded":  # billed all the same
            tally.usage = tally.usage + Usage().add(result.message.usage)
        return apply_failure(
            job,
            item.pk,
            "errored",
            error_type="harvest_error",
            error_message=f"the server could not process the result ({type(exc).__name__}: {exc})",
        )


def apply_failure(job: BatchJob, item_pk: int, kind: str, *, error_type: str, error_message: str) -> str:
    with transaction.atomic():
        item = _items_for_update(job).filter(pk=item_pk).first()
        if item is None:
            return SKIPPED
        return _failed(job, item, kind, error_type=error_type, error_message=error_message)


def _failed(
    job: BatchJob,
    item: BatchItem,
    kind: str,
    *,
    error_type: str = "",
    error_message: str = "",
    max_tokens: int | None = None,
) -> str:
    note = retry.failure_note(
        kind, job.batch_id, error_type=error_type, error_message=error_message, max_tokens=max_tokens
    )
    decision = retry.decide(kind, item.failures_in_row, note)
    item.failures_in_row, item.last_result, item.error = decision.failures_in_row, kind, decision.note
    if decision.action == retry.FAIL:
        item.state, item.snapshot = BatchItem.State.FAILED, None
        ClauseTask.objects.filter(pk=item.task_id).exclude(status=ClauseTask.Status.DONE).update(
            status=ClauseTask.Status.FAILED, error=decision.note[:4000]
        )
        label = FAILED_ITEM
    else:
        item.state, item.snapshot = BatchItem.State.PENDING, retry.add_note(item.snapshot, note)
        label = REQUEUED
    item.save(update_fields=["failures_in_row", "last_result", "error", "state", "snapshot", "updated_at"])
    return label


def _succeeded(
    job: BatchJob, run: ExtractionRun, item: BatchItem, message: Any, builder: Builder, usage: Usage
) -> str:
    task = item.task
    document = task.document
    clause = as_plain(task.clause_type)
    interrupted: dict = {}
    # The system prompt the agent renders to "send" this turn is never sent (the relay hands back the
    # harvested reply), so it gets plain facts instead of a database round trip; a next turn is built
    # from the snapshot, with CASE_FACTS from the database, when it is submitted.
    session = builder.session(
        document,
        item.snapshot,
        Relay(message),
        on_checkpoint=lambda snap, reason: interrupted.update(snapshot=snap, reason=reason),
        facts=lambda: CaseFacts(doc_id=str(document.pk)),
    )
    try:
        outcome = session.extract(clause, checkpoints.clause_id_for(document.pk, clause.slug), [])
    except NextRequest:  # the agent's next turn (verification retry, nudge): into the next batch
        usage.add(message.usage)
        item.state, item.snapshot, item.failures_in_row, item.last_result = (
            BatchItem.State.PENDING,
            session.snapshot(),
            0,
            "continued",
        )
        item.save(update_fields=["state", "snapshot", "failures_in_row", "last_result", "updated_at"])
        return REQUEUED
    except Interrupted:  # max_tokens: checkpoint first, then resume in the next batch
        usage.add(message.usage)
        snapshot = interrupted.get("snapshot") or session.snapshot()
        checkpoints.save(
            run,
            document,
            snapshot,
            last_record={
                "reason": "max_tokens",
                "clause_type": clause.name,
                "custom_id": item.custom_id,
                "batch_id": job.batch_id,
            },
        )
        BatchJob.objects.filter(pk=job.pk).update(n_max_tokens=F("n_max_tokens") + 1)
        item.snapshot = snapshot
        budget = (snapshot.get("position") or {}).get("max_tokens")
        return _failed(job, item, "max_tokens", max_tokens=budget)
    usage.add(message.usage)
    if outcome.status == FAILED:
        error = "; ".join(outcome.errors)[:4000] or "the agent gave up on this clause"
        item.state, item.error, item.snapshot, item.last_result = (
            BatchItem.State.FAILED,
            error,
            None,
            "succeeded",
        )
        item.save(update_fields=["state", "error", "snapshot", "last_result", "updated_at"])
        ClauseTask.objects.filter(pk=task.pk).exclude(status=ClauseTask.Status.DONE).update(
            status=ClauseTask.Status.FAILED, error=error
        )
        return FAILED_ITEM
    save_outcome(
        run,
        document,
        task.clause_type,
        with_closest(outcome, session.document, clause),
        engine="anthropic",
        model=run.model,
        chunk_pks=session.document.chunk_pks,
    )
    ClauseTask.objects.filter(pk=task.pk).update(status=ClauseTask.Status.DONE, error="")
    item.state, item.snapshot, item.failures_in_row, item.last_result, item.error = (
        BatchItem.State.DONE,
        None,
        0,
        "succeeded",
        "",
    )
    item.save(update_fields=["state", "snapshot", "failures_in_row", "last_result", "error", "updated_at"])
    return STORED
