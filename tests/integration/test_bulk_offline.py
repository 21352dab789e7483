"""The offline bulk path on two real Celery workers: one task per document, spread over the workers,
the same rows and progress as any run, and idempotent when its tasks are delivered again."""

from __future__ import annotations

import os
import time

import pytest

from bulk.service import start_bulk
from extraction import run_status, tasks
from extraction.models import Citation, ClauseTask, Extraction, ExtractionRun
from taskstate.models import TaskState
from tests.integration.extraction_fixtures import clause_types, make_contract
from tests.worker import WorkerProcess

NAMES = ["Payment", "Governing Law"]
# A queue of their own, so a session-wide worker started by other test modules takes no task.
QUEUE = f"bulk-offline-{os.getpid()}"


@pytest.fixture
def two_workers(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        workers = [
            WorkerProcess(f"bulk{n}", concurrency=1, env={"CELERY_TASK_DEFAULT_QUEUE": QUEUE}).start()
            for n in (1, 2)
        ]
    yield workers
    for w in workers:
        w.stop()


def _wait(run, timeout=240):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.status in ("done", "failed"):
            return run
        time.sleep(0.5)
    raise AssertionError(f"run {run.pk} still {run.status}: {run_status.counts(run)}")


@pytest.mark.django_db(transaction=True)
def test_offline_bulk_run_is_spread_over_the_workers_and_idempotent(two_workers, engagement):
    docs = [make_contract(engagement, title=f"Supply agreement {n}") for n in range(6)]
    clause_types(NAMES)
    run = start_bulk(engagement, clause_types=NAMES, engine="offline", enqueue=False)
    tasks.enqueue_run(run.pk, queue=QUEUE)
    assert run.mode == ExtractionRun.Mode.BATCH and run.engine == "offline"
    _wait(run)
    logs = "\n".join(w.log_tail() for w in two_workers)
    assert run.status == "done", logs
    assert ClauseTask.objects.filter(run=run, status="done").count() == len(docs) * len(NAMES)
    assert Extraction.objects.filter(run=run).count() == len(docs) * len(NAMES)
    hosts = set(
        TaskState.objects.filter(name="extraction.tasks.extract_document", state="success").values_list(
            "worker", flat=True
        )
    )
    assert len(hosts) == 2, hosts  # both workers took documents

    before = (Extraction.objects.count(), Citation.objects.count())
    assert tasks.enqueue_run(run.pk) == 0  # nothing open: nothing is sent
    from extraction.tasks import extract_document

    for d in docs[:3]:  # redelivered messages
        extract_document.apply_async((run.pk, d.pk), queue=QUEUE)
    deadline = time.monotonic() + 60
    while (
        TaskState.objects.filter(name="extraction.tasks.extract_document")
        .exclude(state__in=["success", "failure"])
        .exists()
        and time.monotonic() < deadline
    ):
        time.sleep(0.3)
    assert (Extraction.objects.count(), Citation.objects.count()) == before
    run.refresh_from_db()
    assert run.status == "done"
