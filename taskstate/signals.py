"""Celery signal handlers that write ``TaskState`` rows (paperless-ngx style).

before_task_publish → pending, task_prerun → started, task_retry → retry,
task_postrun → success (unless it failed), task_failure → failure with the error.
"""

from __future__ import annotations

import logging
import traceback as tb

from celery import signals
from django.db import DatabaseError
from django.utils import timezone

from taskstate.models import TaskState

log = logging.getLogger(__name__)
_ARGS_LIMIT = 500


def _save(task_id: str, **fields) -> None:
    if not task_id:
        return
    try:
        TaskState.objects.update_or_create(task_id=task_id, defaults=fields)
    except DatabaseError:  # never let bookkeeping break the task itself
        log.exception("could not record state of task %s", task_id)


@signals.before_task_publish.connect
def on_publish(sender=None, headers=None, body=None, **kwargs):
    headers = headers or {}
    _save(
        headers.get("id", ""),
        name=sender or headers.get("task", ""),
        state=TaskState.State.PENDING,
        args=str(headers.get("argsrepr", ""))[:_ARGS_LIMIT],
        queued_at=timezone.now(),
    )


@signals.task_prerun.connect
def on_prerun(task_id=None, task=None, args=None, **kwargs):
    retries = getattr(task.request, "retries", 0) if task else 0
    _save(
        task_id,
        name=task.name if task else "",
        state=TaskState.State.STARTED,
        args=repr(args)[:_ARGS_LIMIT] if args else "",
        worker=getattr(task.request, "hostname", "") or "",
        attempts=retries + 1,
        started_at=timezone.now(),
        finished_at=None,
    )


@signals.task_retry.connect
def on_retry(request=None, reason=None, **kwargs):
    _save(getattr(request, "id", ""), state=TaskState.State.RETRY, error=str(reason)[:2000])


@signals.task_postrun.connect
def on_postrun(task_id=None, state=None, **kwargs):
    if state == "SUCCESS":
        _save(task_id, state=TaskState.State.SUCCESS, error="", finished_at=timezone.now())


@signals.task_failure.connect
def on_failure(task_id=None, exception=None, einfo=None, **kwargs):
    trace = str(einfo) if einfo else "".join(tb.format_exception(exception))
    _save(
        task_id,
        state=TaskState.State.FAILURE,
        error=f"{type(exception).__name__}: {exception}"[:2000],
        traceback=trace[-10000:],
        finished_at=timezone.now(),
    )
