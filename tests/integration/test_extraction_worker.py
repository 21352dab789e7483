"""A Celery worker killed with SIGKILL in the middle of an extraction run, then restarted:
the unacknowledged message comes back (acks_late + visibility timeout), the new session resumes
from the checkpoint, and the run completes with every clause once."""

from __future__ import annotations

import os
import time

import pytest
from django.db.models import Count

from extraction import launch
from extraction.models import ClauseTask, Extraction, ExtractionRun
from tests.integration.extraction_fixtures import ANSWERS, TYPES, clause_types, make_contract, wait_until
from tests.mock_anthropic import FakeClaude, MockAnthropic, serve
from tests.worker import WorkerProcess

VISIBILITY = 5


@pytest.mark.django_db(transaction=True)
def test_worker_killed_mid_run_resumes_and_completes_without_duplicates(engagement):
    api = MockAnthropic(FakeClaude(dict(ANSWERS)), delay=0.4)
    url, stop_server = serve(api)
    queue = f"extract-kill-{os.getpid()}"
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "ANTHROPIC_BASE_URL": url,
        "EXTRACTION_ENGINE": "anthropic",
        "ANTHROPIC_MODEL": "claude-sonnet-4-6",
        "ANTHROPIC_MAX_RETRIES": "2",
        "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY),
        "CELERY_TASK_DEFAULT_QUEUE": queue,
    }
    first = WorkerProcess("kill1", env=env).start()
    second = None
    try:
        document = make_contract(engagement)
        run = launch.create_run(
            engagement, documents=[document], clause_types=clause_types(), engine="anthropic", queue=queue
        )
        done = ClauseTask.objects.filter(run=run, status="done")
        wait_until(lambda: done.count() >= 2, 60, "two clauses done before the kill", first)
        first.kill()
        killed_at = time.monotonic()
        finished_before_kill = done.count()
        assert finished_before_kill < len(TYPES), "the run finished before the kill; slow the mock down"
        assert ClauseTask.objects.filter(run=run, status__in=["pending", "running"]).exists()

        # the broker hands the unacknowledged message out again once the visibility timeout has passed
        time.sleep(max(0.0, VISIBILITY + 1 - (time.monotonic() - killed_at)))
        second = WorkerProcess("kill2", env=env).start()
        wait_until(
            lambda: ExtractionRun.objects.get(pk=run.pk).status in ("done", "failed"),
            90,
            "the run to finish",
            second,
        )

        run.refresh_from_db()
        assert run.status == "done", (run.error, second.log_tail())
        assert ClauseTask.objects.filter(run=run, status="done").count() == len(TYPES)
        per_type = Extraction.objects.filter(run=run).values("clause_type").annotate(n=Count("id"))
        assert sorted(r["n"] for r in per_type) == [1] * len(TYPES), "a clause was extracted twice"
        got = {e.clause_type.name: e.clause_text or None for e in Extraction.objects.filter(run=run)}
        assert got == ANSWERS
        assert (
            ClauseTask.objects.filter(run=run, attempts__gt=1).count() >= 1
        )  # the interrupted one ran again
        assert run.input_tokens > 0 and run.cost_usd > 0
    finally:
        for w in (first, second):
            if w is not None:
                w.stop()
        stop_server()
