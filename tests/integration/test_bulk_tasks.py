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


def test_commit_submits_and_beat_polls_harvests_and_retries(engagement, api, django_capture_on_commit_callbacks):
    make_contract(engagement)
    clause_types(NAMES)
    api.rules.append(lambda cid, params, n: "errored" if n == 1 and "Anti-Assignment" in str(params["messages"])
                     else None)
    with django_capture_on_commit_callbacks(execute=True):
        run = start_bulk(engagement, clause_types=NAMES, engine="anthropic")
    (job,) = BatchJob.objects.filter(run=run)
    assert job.state == "in_progress" and job.request_count == 3

    assert tasks.poll_batches().startswith("polled 1, ended 0")   # still processing
    summary = tasks.poll_batches()                                # ends -> harvest -> resubmit the errored one
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
    ended = BatchJob.objects.create(run=run, sequence=2, batch_id="msgbatch_x", state="harvesting",
                                    harvest_started_at=long_ago)
    fresh = BatchJob.objects.create(run=run, sequence=3, batch_id="msgbatch_y", state="harvesting",
                                    harvest_started_at=timezone.now())
    assert ended.pk in poll.to_harvest() and fresh.pk not in poll.to_harvest()
