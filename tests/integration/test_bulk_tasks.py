"""The Celery side of bulk runs: the commit starts the submission, beat's ``poll_batches`` follows the
batches, hands ended ones to ``harvest_job`` and retries to ``submit_run``, and stale work is taken up
again. Tasks run eagerly here against a mock API served over HTTP; the offline path runs on real workers
in ``test_bulk_offline``."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from bulk import poll, tasks
from bulk.models import BatchItem, BatchJob
from bulk.service import start_bulk
from bulk.submit import submit_pending
from config.celery import app
from extraction.models import Extraction
from tests.integration.extraction_fixtures import ANSWERS, clause_types, make_contract
from tests.mock_anthropic import FakeClaude, serve
from tests.mock_anthropic_batches import BatchAPI

pytestmark = pytest.mark.django_db
NAMES = ["Payment", "Governing Law", "Anti-Assignment"]


@pytest.fixture
def api(settings):
    api = BatchAPI(FakeClaude(dict(ANSWERS)), polls_to_end=2)
    url, stop = serve(api)
    api.results_base = url
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    settings.ANTHROPIC_BASE_URL = url
    settings.ANTHROPIC_MAX_RETRIES = 0
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield api
    app.conf.task_always_eager = eager
    stop()


def test_commit_submits_and_beat_polls_harvests_and_retries(
    engagement, api, django_capture_on_commit_callbacks
):
    make_contract(engagement)
    clause_types(NAMES)
    api.rules.append(
        lambda cid, params, n: "errored" if n == 1 and "Anti-Assignment" in str(params["messages"]) else None
    )
    with django_capture_on_commit_callbacks(execute=True):
        run = start_bulk(engagement, clause_types=NAMES, engine="anthropic")
    (job,) = BatchJob.objects.filter(run=run)
    assert job.state == "in_progress" and job.request_count == 3

    assert tasks.poll_batches().startswith("polled 1, ended 0")  # still processing
    summary = tasks.poll_batches()  # ends -> harvest -> resubmit the errored one
    assert "ended 1" in summary
    job.refresh_from_db()
    assert job.state == "harvested" and (job.n_succeeded, job.n_errored) == (2, 1)
    (retry_job,) = BatchJob.objects.filter(run=run, sequence=2)
    assert retry_job.request_count == 1 and retry_job.retries == 1
    tasks.poll_batches()
    tasks.poll_batches()
    run.refresh_from_db()
    assert run.status == "done" and Extraction.objects.filter(run=run).count() == 3
    assert tasks.poll_batches().startswith("polled 0, ended 0, harvest 0, submit 0")


def test_stale_work_is_taken_up_again(engagement, api):
    make_contract(engagement)
    clause_types(NAMES)
    run = start_bulk(engagement, clause_types=NAMES, engine="anthropic", enqueue=False)
    long_ago = timezone.now() - timedelta(hours=3)
    # a submitter died after claiming
    BatchItem.objects.filter(run=run).update(state="building", claimed_at=long_ago)
    # another died between writing its job and saving the batch id
    lost = BatchJob.objects.create(run=run, sequence=1, request_count=1)
    BatchJob.objects.filter(pk=lost.pk).update(created_at=long_ago)
    item = BatchItem.objects.filter(run=run).first()
    BatchItem.objects.filter(pk=item.pk).update(state="submitted", job=lost)
    out = poll.recover_stale()
    assert out == {"items_released": 2, "jobs_lost": 1}
    assert BatchItem.objects.filter(run=run, state="pending").count() == 3
    lost.refresh_from_db()
    assert lost.state == "lost"
    # what the run page shows of it: no progress of its own, and where its requests went
    assert lost.progress == 0
    assert "sent again in a later batch" in lost.error and "not followed" in lost.error
    assert poll.runs_waiting() == [run.pk]
    # a harvest that stopped halfway is handed out again once its lease is old
    ended = BatchJob.objects.create(
        run=run, sequence=2, batch_id="msgbatch_x", state="harvesting", harvest_started_at=long_ago
    )
    fresh = BatchJob.objects.create(
        run=run, sequence=3, batch_id="msgbatch_y", state="harvesting", harvest_started_at=timezone.now()
    )
    assert ended.pk in poll.to_harvest() and fresh.pk not in poll.to_harvest()


def _submitted(engagement, documents=None, capture=None):
    """A Claude bulk run whose batch the API is processing."""
    clause_types(NAMES)
    with capture(execute=True):
        run = start_bulk(engagement, clause_types=NAMES, documents=documents, engine="anthropic")
    (job,) = BatchJob.objects.filter(run=run)
    assert job.state == "in_progress"
    return run, job


@pytest.mark.parametrize("what", ["engagement", "run"])
def test_deleting_a_run_or_its_engagement_cancels_its_batches_once_the_deletion_commits(
    engagement, api, django_capture_on_commit_callbacks, what
):
    """The batches of a run deleted while the API processed them ran on, billed, and nobody harvested them."""
    make_contract(engagement)
    run, job = _submitted(engagement, capture=django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks() as callbacks:
        (engagement if what == "engagement" else run).delete()
    assert api.cancels == []  # nothing leaves before the deletion commits
    for callback in callbacks:
        callback()
    assert api.cancels == [job.batch_id] and api._batches[job.batch_id]["cancel"] is True
    assert tasks.poll_batches().startswith("polled 0, ended 0, harvest 0, submit 0")


def test_a_batch_is_canceled_when_the_last_document_it_works_for_is_deleted(
    engagement, api, django_capture_on_commit_callbacks
):
    from extraction.run_status import NOTHING_LEFT

    first, second = (make_contract(engagement, title=f"Supply {n}") for n in range(2))
    run, job = _submitted(engagement, capture=django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        first.delete()
    assert api.cancels == []  # the other document's requests still wait for it
    with django_capture_on_commit_callbacks(execute=True):
        second.delete()
    assert api.cancels == [job.batch_id]
    job.refresh_from_db()
    assert job.state == "canceling" and "deleted" in job.error
    tasks.poll_batches()
    tasks.poll_batches()  # the canceled batch ends, its (gone) lines are harvested
    job.refresh_from_db()
    run.refresh_from_db()
    assert job.state == "harvested" and (run.status, run.error) == ("failed", NOTHING_LEFT)


def test_a_cancel_the_api_cannot_take_is_tried_again_then_logged_with_the_batch_id(
    engagement, api, django_capture_on_commit_callbacks, caplog
):
    from bulk import cancel
    from tests.mock_anthropic import MockAnthropic

    make_contract(engagement)
    run, job = _submitted(engagement, capture=django_capture_on_commit_callbacks)
    api.cancel_script.extend([MockAnthropic.overloaded(), MockAnthropic.server_error()])  # then it takes it
    with django_capture_on_commit_callbacks(execute=True):
        run.delete()
    assert api.cancels == [job.batch_id] * 3 and api._batches[job.batch_id]["cancel"] is True

    make_contract(engagement, title="Another")
    run, job = _submitted(engagement, capture=django_capture_on_commit_callbacks)
    api.cancels.clear()
    api.cancel_script.extend([MockAnthropic.overloaded()] * (cancel.RETRIES + 1))  # down for good
    with django_capture_on_commit_callbacks(execute=True):
        run.delete()
    assert api.cancels == [job.batch_id] * (cancel.RETRIES + 1)
    assert api._batches[job.batch_id]["cancel"] is False
    (record,) = [r for r in caplog.records if r.levelname == "ERROR" and job.batch_id in r.getMessage()]
    assert "overloaded_error" in record.getMessage() and "Claude Console" in record.getMessage()


def test_without_an_api_key_the_batch_to_cancel_is_logged(
    engagement, api, django_capture_on_commit_callbacks, settings, caplog
):
    make_contract(engagement)
    run, job = _submitted(engagement, capture=django_capture_on_commit_callbacks)
    settings.ANTHROPIC_API_KEY = ""
    with django_capture_on_commit_callbacks(execute=True):
        engagement.delete()
    assert api.cancels == []
    (record,) = [r for r in caplog.records if r.levelname == "ERROR" and job.batch_id in r.getMessage()]
    assert "ANTHROPIC_API_KEY is not set" in record.getMessage() and "Claude Console" in record.getMessage()


def test_work_the_poll_handed_out_for_a_run_deleted_meanwhile_ends_quietly(
    engagement, api, django_capture_on_commit_callbacks
):
    make_contract(engagement)
    run, job = _submitted(engagement, capture=django_capture_on_commit_callbacks)
    run_id, job_id = run.pk, job.pk
    engagement.delete()  # (its on-commit cancel is not run here)
    assert tasks.harvest_job(job_id) == "gone (deleted)"
    assert tasks.submit_run(run_id) == "gone (deleted)"


def _deleting_during_creation(api, delete):
    """The next batch creation: ``delete()`` runs while the body is uploaded, then the API takes the batch."""
    create = api._batch_create

    def slow(body):
        api._batch_create = create
        delete()
        return create(body)

    api._batch_create = slow


@pytest.mark.parametrize("what", ["engagement", "documents"])
def test_a_batch_whose_requests_were_deleted_while_it_was_sent_is_canceled(engagement, api, what):
    """The deletion took the job, or its items, before the batch had an id to cancel: the submission failed
    with a DoesNotExist traceback (the run deleted) or followed a batch nobody waited for (the documents),
    and either way the batch ran and was billed."""
    documents = [make_contract(engagement, title=f"Supply {n}") for n in range(2)]
    clause_types(NAMES)
    run = start_bulk(engagement, clause_types=NAMES, engine="anthropic", enqueue=False)
    if what == "engagement":
        _deleting_during_creation(api, engagement.delete)
    else:
        _deleting_during_creation(api, lambda: [d.delete() for d in documents])

    (job,) = submit_pending(run, client=api.client())

    (created,) = api.created
    assert job.batch_id == created["id"] and api.cancels == [created["id"]]
    assert api._batches[created["id"]]["cancel"] is True
    assert tasks.poll_batches().startswith("polled 0" if what == "engagement" else "polled 1")


def test_a_run_deleted_before_its_next_batch_is_sent_ends_the_submission_quietly(
    engagement, api, monkeypatch
):
    from bulk import build

    make_contract(engagement)
    clause_types(NAMES)
    run = start_bulk(engagement, clause_types=NAMES, engine="anthropic", enqueue=False)
    built = build.Builder.build

    def build_then_delete(self, item):  # the engagement is deleted while the requests are built
        out = built(self, item)
        engagement.delete()
        return out

    monkeypatch.setattr(build.Builder, "build", build_then_delete)
    assert submit_pending(run, client=api.client()) == []
    assert api.created == [] and not BatchJob.objects.exists()
