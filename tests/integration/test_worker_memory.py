"""A worker child's memory is bounded: a child that holds more than ``WORKER_MAX_MEMORY_PER_CHILD_MB`` after a
task (a large conversion's heap, which Python keeps) is replaced by a fresh one, and every child is replaced
after ``WORKER_MAX_TASKS_PER_CHILD`` tasks."""

from __future__ import annotations

import os
import time

import pytest

from config.celery import app
from taskstate.models import TaskState
from tests.worker import WorkerProcess


def test_the_bounds_of_a_worker_childs_memory_are_set_by_default():
    assert app.conf.worker_max_memory_per_child == 1536 * 1024  # KiB
    assert app.conf.worker_max_tasks_per_child == 200


def _children(worker: WorkerProcess) -> set[int]:
    stats = app.control.inspect(destination=[f"{worker.name}@{os.uname().nodename}"], timeout=2).stats() or {}
    return {pid for reply in stats.values() for pid in reply["pool"]["processes"]}


@pytest.mark.django_db(transaction=True)
def test_a_child_over_its_memory_bound_after_a_task_is_replaced(monkeypatch):
    from taskstate.tasks import healthcheck

    queue = f"memory-{os.getpid()}"
    monkeypatch.setitem(app.conf, "task_default_queue", queue)  # only this test's worker takes its messages
    worker = WorkerProcess(
        "memory", env={"CELERY_TASK_DEFAULT_QUEUE": queue, "WORKER_MAX_MEMORY_PER_CHILD_MB": "1"}
    ).start()
    try:
        before = _children(worker)
        assert len(before) == 1
        sent = healthcheck.delay("grown")
        deadline = time.monotonic() + 30
        while not TaskState.objects.filter(task_id=sent.id, state="success").exists():
            assert time.monotonic() < deadline, worker.log_tail()
            time.sleep(0.1)
        while (after := _children(worker)) in (before, set()):  # any child is over 1 MB: it is replaced
            assert time.monotonic() < deadline, worker.log_tail()
            time.sleep(0.2)
        assert len(after) == 1 and after.isdisjoint(before)
    finally:
        worker.stop()
