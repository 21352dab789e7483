"""The Celery task around a document's extraction (run in-process with ``apply``; the real worker's
redelivery after SIGKILL is in test_extraction_worker): a max_tokens stop, the soft time limit and
a lost database connection resume in a fresh session from the checkpoint, and a run that keeps
being cut short ends failed with the reason instead of looping."""

from __future__ import annotations

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.db import OperationalError

from extraction import launch, pipeline, run_status
from extraction.models import ClauseTask, Extraction
from extraction.tasks import MAX_RESUMES, extract_document
from tests.integration.extraction_fixtures import ANSWERS, TYPES, clause_types, make_contract
from tests.mock_anthropic import FakeClaude, MockAnthropic, message, serve, text_block, tool_use_block

pytestmark = pytest.mark.django_db


@pytest.fixture
def claude(settings):
    """A mock Messages API served over HTTP, with the settings that point the engine at it."""
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    url, stop = serve(api)
    settings.ANTHROPIC_API_KEY, settings.ANTHROPIC_BASE_URL, settings.ANTHROPIC_MAX_RETRIES = (
        "sk-ant-test",
        url,
        1,
    )
    settings.ANTHROPIC_MAX_TOKENS = 1024
    yield api
    stop()


def _run(engagement):
    document = make_contract(engagement)
    run = launch.create_run(
        engagement, documents=[document], clause_types=clause_types(), engine="anthropic", enqueue=False
    )
    return run, document


def _cut_short() -> dict:
    return message(
        [text_block("The clause reads: "), tool_use_block("extract_clause", {"clause_id": "x"})], "max_tokens"
    )


def test_max_tokens_mid_run_resumes_through_the_task_and_finishes_every_clause(engagement, claude):
    run, document = _run(engagement)
    claude.script.extend([None, None, _cut_short()])

    assert extract_document.apply(args=(run.pk, document.pk)).get() == "done"

    assert ClauseTask.objects.filter(run=run, status="done").count() == len(TYPES)
    got = {e.clause_type.name: e.clause_text or None for e in Extraction.objects.filter(run=run)}
    assert got == ANSWERS  # every clause once, the interrupted one included
    assert claude.requests[3]["max_tokens"] == 2048  # the fresh session asked with more room


def test_a_run_cut_short_every_time_ends_failed_with_the_reason(engagement, claude, settings):
    settings.ANTHROPIC_MAX_TOKENS = 16  # doubling to the 32,000 ceiling would take more resumes than allowed
    run, document = _run(engagement)
    claude.script.extend([_cut_short()] * 50)

    assert extract_document.apply(args=(run.pk, document.pk)).get() == "failed"

    tasks = ClauseTask.objects.filter(run=run)
    assert not tasks.filter(status__in=["pending", "running"]).exists()
    errors = list(tasks.values_list("error", flat=True))
    assert errors.count(f"interrupted {MAX_RESUMES} times (max_tokens or the time limit)") >= len(TYPES) - 1
    assert set(errors) <= {
        f"interrupted {MAX_RESUMES} times (max_tokens or the time limit)",
        "no answer after 8 turns",
    }  # the first one's turns ran out first
    assert not Extraction.objects.filter(run=run).exists()
    run.refresh_from_db()
    assert run.status == "failed"


@pytest.mark.parametrize(
    "stop",
    [OperationalError("server closed the connection unexpectedly"), SoftTimeLimitExceeded()],
    ids=["database connection lost", "soft time limit"],
)
def test_a_task_stopped_by_the_database_or_the_time_limit_resumes_and_loses_nothing(
    engagement, claude, monkeypatch, stop
):
    run, document = _run(engagement)
    real, calls = pipeline.process_document, []

    def stopped_once(run_id, document_id, **kwargs):
        calls.append(run_id)
        if len(calls) == 1:
            real(run_id, document_id)  # the whole document done but the last step ...
            ClauseTask.objects.filter(run=run, clause_type__name="Insurance").update(status="running")
            raise stop  # ... and the task stopped before it could finish the clause it was on
        return real(run_id, document_id)

    monkeypatch.setattr(pipeline, "process_document", stopped_once)
    assert extract_document.apply(args=(run.pk, document.pk)).get() == "done"

    assert len(calls) == 2 and ClauseTask.objects.filter(run=run, status="done").count() == len(TYPES)
    assert Extraction.objects.filter(run=run).count() == len(TYPES)  # nothing twice, nothing lost


def test_an_api_overloaded_past_the_sdks_retries_is_waited_out_not_failed(engagement, claude, monkeypatch):
    from celery.app.task import Task

    run, document = _run(engagement)
    claude.script.extend([claude.overloaded()] * 2)  # the SDK's one retry runs out on the first clause
    waits = []
    real_retry = Task.retry

    def retry(self, *args, **kwargs):
        waits.append(kwargs.get("countdown"))
        return real_retry(self, *args, **{**kwargs, "countdown": 0})

    monkeypatch.setattr(Task, "retry", retry)
    assert extract_document.apply(args=(run.pk, document.pk)).get() == "done"

    assert waits == [30]  # minutes-scale back-off, not the SDK's seconds
    assert ClauseTask.objects.filter(run=run, status="done").count() == len(TYPES)
    got = {e.clause_type.name: e.clause_text or None for e in Extraction.objects.filter(run=run)}
    assert got == ANSWERS


def test_no_clause_is_started_past_the_deadline_and_the_next_task_goes_on(engagement, claude):
    import time

    run, document = _run(engagement)
    assert (
        pipeline.process_document(run.pk, document.pk, deadline=time.monotonic() - 1) == pipeline.INTERRUPTED
    )
    assert ClauseTask.objects.filter(run=run, status="done").count() == 1  # one clause per call at least
    assert ClauseTask.objects.filter(run=run, status="pending").count() == len(TYPES) - 1
    assert pipeline.process_document(run.pk, document.pk) == pipeline.DONE
    assert Extraction.objects.filter(run=run).count() == len(TYPES)


def test_a_clause_left_running_by_a_lost_process_is_failed_in_words(engagement):
    import datetime as dt

    from django.utils import timezone

    from config.celery import lost_after_s
    from extraction.tasks import fail_abandoned_tasks

    run, document = _run(engagement)
    other = launch.create_run(
        engagement, documents=[document], clause_types=clause_types(), engine="anthropic", enqueue=False
    )  # a second run whose process is alive and working
    lost = ClauseTask.objects.filter(run=run).first()
    ClauseTask.objects.filter(pk=lost.pk).update(status="running")
    ClauseTask.objects.filter(pk=lost.pk).update(
        updated_at=timezone.now() - dt.timedelta(seconds=lost_after_s() + 60)
    )  # a web worker died mid-find
    working = ClauseTask.objects.filter(run=other).first()
    ClauseTask.objects.filter(pk=working.pk).update(status="running")

    assert fail_abandoned_tasks.apply().get() == "1 abandoned"
    lost.refresh_from_db()
    assert lost.status == "failed" and "the process running it was lost" in lost.error
    assert not ClauseTask.objects.filter(run=run, status__in=["pending", "running"]).exists()
    run.refresh_from_db()
    assert run.status == "failed"
    working.refresh_from_db()
    assert working.status == "running"  # recent: left alone


def test_a_clause_still_within_a_longer_configured_time_limit_is_not_failed(engagement, settings):
    # the cut-off was a fixed 3 hours: with CELERY_TASK_TIME_LIMIT at 5 hours, a clause still being worked on
    # at 3 h 10 was failed as abandoned
    import datetime as dt

    from django.utils import timezone

    from extraction.tasks import fail_abandoned_tasks

    settings.CELERY_TASK_TIME_LIMIT = 5 * 3600
    run, _ = _run(engagement)
    task = ClauseTask.objects.filter(run=run).first()
    ClauseTask.objects.filter(pk=task.pk).update(status="running")
    ClauseTask.objects.filter(pk=task.pk).update(
        updated_at=timezone.now() - dt.timedelta(hours=3, minutes=10)
    )
    assert fail_abandoned_tasks.apply().get() == "0 abandoned"
    task.refresh_from_db()
    assert task.status == "running"


def test_a_clause_another_worker_finished_meanwhile_is_not_asked_again(engagement, claude):
    # a redelivered message can run the same document on a second worker: what the first one finishes
    # after this one listed its tasks must not be set running again, asked again (billed) and saved twice
    from extraction.catalog.sync import catalog_order

    run, document = _run(engagement)
    tasks = sorted(
        ClauseTask.objects.filter(run=run).select_related("clause_type"),
        key=lambda t: (catalog_order(t.clause_type.name), t.clause_type.name),
    )
    done_elsewhere = tasks[-1]

    def observe(event):
        if event["task"].pk == tasks[0].pk:  # the other worker finishes the last clause now
            ClauseTask.objects.filter(pk=done_elsewhere.pk).update(status="done")

    assert pipeline.process_document(run.pk, document.pk, observe=observe) == pipeline.DONE
    done_elsewhere.refresh_from_db()
    assert done_elsewhere.status == "done" and done_elsewhere.attempts == 0
    assert not Extraction.objects.filter(run=run, clause_type=done_elsewhere.clause_type).exists()
    assert Extraction.objects.filter(run=run).count() == len(TYPES) - 1


@pytest.mark.django_db(transaction=True)  # the deletion commits, as an admin's does
@pytest.mark.parametrize("when", ["before its turn", "while a clause is asked"])
@pytest.mark.parametrize("deleted", ["document", "engagement"])
def test_a_document_deleted_during_its_run_ends_the_task_quietly_and_the_run_finishes(
    engagement, claude, monkeypatch, when, deleted
):
    """An admin deletes the document (or its whole engagement) while its run is queued or working: the
    task ends without a traceback or a retry, and a run left with nothing to do says so instead of
    "running" for ever."""
    from engagements.models import Engagement
    from extraction.models import ExtractionRun
    from ingest.models import Document

    run, document = _run(engagement)

    def delete():
        (
            Document.objects.filter(pk=document.pk)
            if deleted == "document"
            else Engagement.objects.filter(pk=engagement.pk)
        ).delete()

    if when == "before its turn":
        delete()
    else:
        real = pipeline.clause_id_for

        def deleted_while_asked(document_id, slug):
            if not Document.objects.filter(pk=document_id).exists():
                return real(document_id, slug)
            delete()  # the engine is answering the first clause now
            return real(document_id, slug)

        monkeypatch.setattr(pipeline, "clause_id_for", deleted_while_asked)

    assert extract_document.apply(args=(run.pk, document.pk)).get() in ("done", "gone")

    if deleted == "engagement":
        assert not ExtractionRun.objects.filter(pk=run.pk).exists()
        return
    run.refresh_from_db()
    assert run.status == "failed" and run.error == run_status.NOTHING_LEFT and run.finished_at
    assert not ClauseTask.objects.filter(run=run).exists()


@pytest.mark.django_db(transaction=True)
def test_a_run_that_loses_one_of_its_documents_finishes_on_the_others(engagement, claude):
    from ingest.models import Document

    first = make_contract(engagement)
    second = make_contract(engagement, "Second Supply Agreement")
    run = launch.create_run(
        engagement, documents=[first, second], clause_types=clause_types(), engine="anthropic", enqueue=False
    )
    assert extract_document.apply(args=(run.pk, first.pk)).get() == "done"
    Document.objects.filter(pk=second.pk).delete()
    assert extract_document.apply(args=(run.pk, second.pk)).get() == "done"
    run.refresh_from_db()
    assert run.status == "done" and not run.error
    assert ClauseTask.objects.filter(run=run, status="done").count() == len(TYPES)
