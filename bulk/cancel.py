"""A batch whose requests were deleted is canceled at the API.

Deleting an engagement, a bulk run, or the documents of a run deletes the rows that follow its
batches (its ``BatchJob`` rows, or the ``BatchItem`` rows a batch's results are for), not the batches:
the API went on processing, and billing, them and nobody collected their results. The ids of the
batches in progress are taken before the rows go (``pre_delete``, received in ``bulk.signals``); once
the deletion commits, ``cancel_requested`` is sent and its receiver queues one Celery task per batch
(``bulk.tasks.cancel_batch``), which cancels it, so the delete request does not wait on the network.
A batch that requests of other documents still wait for keeps running.

A cancel the API could not take (down, overloaded) is tried again with a growing wait
(``backoff``); after ``RETRIES`` more tries, or without an API key, the batch id is logged for an
admin to cancel in the Claude Console: its rows are gone, the log is all that names it.
"""

from __future__ import annotations

import logging
import weakref
from functools import partial

import anthropic
from django.db import transaction
from django.dispatch import Signal

from bulk.models import BatchItem, BatchJob
from bulk.poll import apply_batch
from extraction.agent.engine import make_client
from ingest.models import Document

log = logging.getLogger(__name__)
RETRIES = 5
# The API may be processing these (a SUBMITTING job with a batch id: its submitter stopped after the API took
# it); CANCELING is being canceled already, and an ended batch has nothing left to cancel.
RUNNING = (BatchJob.State.SUBMITTING, BatchJob.State.IN_PROGRESS)
CANCELED, KEPT, NOTHING = "canceled", "kept", "nothing to cancel"
NOTE = "The documents of this batch were deleted while it ran, so it was canceled."

# One deletion (an engagement with its documents, runs and jobs) sends pre_delete for each row it takes: the
# batch ids are gathered per deletion (its ``origin``) and handed over once, when it commits.
_gathered: weakref.WeakKeyDictionary[object, set[str]] = weakref.WeakKeyDictionary()

# Sent with ``batch_ids`` when batches whose requests were deleted are to be canceled; the receiver in
# ``bulk.signals`` queues one ``bulk.tasks.cancel_batch`` each.
cancel_requested = Signal()


def backoff(retries: int) -> int:
    """Seconds before the next try of a cancel that failed ``retries`` times before: 30 s, 1, 2, 4, 8 min."""
    return 30 * 2**retries


def retryable(exc: Exception) -> bool:
    """Whether the API may take the cancel later: it could not be reached, was overloaded or failed itself."""
    if isinstance(exc, anthropic.APIConnectionError):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status >= 500 or status == 429)


def batches_of_document(document: Document) -> list[str]:
    """Batches in progress with requests of ``document`` waiting for their results."""
    return list(
        BatchJob.objects.filter(
            state__in=RUNNING, items__state=BatchItem.State.SUBMITTED, items__task__document=document
        )
        .exclude(batch_id="")
        .values_list("batch_id", flat=True)
        .distinct()
    )


def _gather(origin, using: str, batch_ids) -> None:
    if not batch_ids:
        return
    ids = _gathered.get(origin) if origin is not None else None
    if ids is None:
        ids = set()
        if origin is not None:
            _gathered[origin] = ids
        transaction.on_commit(partial(request_cancel, ids), using=using)
    ids.update(batch_ids)


def request_cancel(batch_ids) -> None:
    """Ask a worker to cancel each of ``batch_ids`` (unless still wanted by then)."""
    cancel_requested.send(BatchJob, batch_ids=sorted(batch_ids))


def on_job_delete(sender, instance: BatchJob, using: str, origin=None, **kwargs) -> None:
    if instance.batch_id and instance.state in RUNNING:
        _gather(origin, using, [instance.batch_id])


def on_document_delete(sender, instance: Document, using: str, origin=None, **kwargs) -> None:
    _gather(origin, using, batches_of_document(instance))


def still_wanted(batch_id: str) -> bool:
    """Whether a job here still follows ``batch_id``: ended or being canceled already, or with requests
    (of documents still there) waiting for its results."""
    job = BatchJob.objects.filter(batch_id=batch_id).first()
    if job is None:
        return False
    return job.state not in RUNNING or job.items.filter(state=BatchItem.State.SUBMITTED).exists()


def cancel_abandoned(batch_id: str, client=None) -> str:
    """Cancel ``batch_id`` unless it is still wanted; the job, when its row is still there, follows the
    cancel. Raises the API's error (``retryable`` says whether to try again) and ``EngineError`` without a
    key."""
    if still_wanted(batch_id):
        return KEPT
    if client is None:
        client = make_client()
    try:
        batch = client.messages.batches.cancel(batch_id)
    except anthropic.NotFoundError:
        log.info("batch %s: its requests were deleted and the API no longer has it", batch_id)
        return NOTHING
    job = BatchJob.objects.filter(batch_id=batch_id).first()
    if job is not None:  # its documents were deleted, its run was not: the poll harvests what it had done
        apply_batch(job, batch)
        BatchJob.objects.filter(pk=job.pk).update(error=NOTE)
    log.info("batch %s canceled: its requests were deleted", batch_id)
    return CANCELED


def not_canceled(batch_id: str, reason: str) -> None:
    log.error(
        "batch %s: its requests were deleted but it could not be canceled (%s); it runs on and is billed: "
        "cancel it in the Claude Console",
        batch_id,
        reason,
    )
