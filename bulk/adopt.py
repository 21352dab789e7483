"""A batch creation that got no answer: find the batch the API may have taken all the same.

The Message Batches API has no idempotency key. A POST that timed out, lost its connection or
got a server error may still have created the batch; sending its requests again would run (and
bill) them twice. So before they go back to pending, the API's list of batches (newest first) is
read back to the time the attempt started, less ``CLOCK_SKEW``: a batch created since, with as
many requests as the job and followed by no job here, is the job's, and is followed instead.

Only a batch that can be nobody else's is taken: when two could be, when another of our jobs of
the same size is being created at the same time (its batch could be the one listed), or when the
list cannot be read, none is taken; the requests are sent again and the run page says which batch
to look for in the Claude Console.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import anthropic

from bulk.models import BatchJob
from bulk.poll import api_error_text

CLOCK_SKEW = timedelta(minutes=2)  # the API's clock against ours
LIST_PAGE = 100  # batches per page of the list (the API allows up to 1,000)
MAX_LISTED = 2000  # read no further: a workspace this busy is not searched by size


def may_have_been_taken(exc: Exception) -> bool:
    """Whether the API may have created the batch although the call failed: no answer came (a timeout,
    a connection lost) or a server error did. A 4xx answer (429 included) and 529 (overloaded) turn
    the batch away at the door."""
    if isinstance(exc, anthropic.APIConnectionError):  # APITimeoutError is one
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and status >= 500 and status != 529


def request_total(batch: Any) -> int:
    c = batch.request_counts
    return c.processing + c.succeeded + c.errored + c.canceled + c.expired


@dataclass(frozen=True)
class Found:
    batch: Any = None  # the ``MessageBatch`` that can only be the job's
    doubt: str = ""  # why none was taken though the API may hold the job's batch (for the run page)


def choose(listed: list, owned: set[str], *, rivals: int, complete: bool) -> Found:
    """Pure core: ``listed`` are the batches created since the attempt started with the job's request
    count, ``owned`` the ids of those our jobs follow, ``rivals`` our other jobs of that size being
    created now, ``complete`` whether the list was read back far enough."""
    free = [b for b in listed if b.id not in owned]
    if not complete:
        return Found(
            doubt="the API's list of batches was too long to read back to the time it was sent, so a "
            "batch it may have taken could not be looked for"
        )
    if not free:
        return Found()
    names = ", ".join(f"{b.id} (created {b.created_at:%Y-%m-%d %H:%M} UTC)" for b in free)
    if len(free) > 1:
        return Found(
            doubt=f"the API lists {len(free)} batches created since with as many requests that no run "
            f"here follows: {names}"
        )
    if rivals:
        return Found(
            doubt=f"the API lists a batch created since with as many requests, {names}, but another batch "
            "of the same size was being sent at the same time and it may be that one"
        )
    return Found(batch=free[0])


def find(client, job: BatchJob) -> Found:
    """The batch the API took for ``job`` (whose creation got no answer), if it can only be that one."""
    since = job.created_at - CLOCK_SKEW
    listed, complete = [], False
    try:
        for n, batch in enumerate(
            client.messages.batches.list(limit=LIST_PAGE)
        ):  # pages follow by themselves
            if batch.created_at < since:
                complete = True
                break
            if n >= MAX_LISTED:
                break
            if request_total(batch) == job.request_count:
                listed.append(batch)
        else:
            complete = True
    except anthropic.APIError as exc:
        return Found(doubt=f"the API could not be asked whether it took it ({api_error_text(exc)})")
    owned = set(
        BatchJob.objects.filter(batch_id__in=[b.id for b in listed]).values_list("batch_id", flat=True)
    )
    # asked after the list: a rival's row is written before its POST, so one whose batch is listed is seen
    rivals = (
        BatchJob.objects.filter(state=BatchJob.State.SUBMITTING, batch_id="", request_count=job.request_count)
        .exclude(pk=job.pk)
        .count()
    )
    return choose(listed, owned, rivals=rivals, complete=complete)


def doubt_note(doubt: str) -> str:
    """What the run page says when a batch may have been taken but none could be followed."""
    return (
        f"Its creation got no answer and {doubt}. Its requests are sent again in a later batch; "
        "if the API had taken this one, it runs unfollowed and is billed as well: "
        "cancel it in the Claude Console."
    )
