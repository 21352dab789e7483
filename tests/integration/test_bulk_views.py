"""The batch page and the admins' "Bulk extract" form: scoping, roles, what the page shows."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from bulk import poll, progress
from bulk.harvest import harvest
from bulk.models import BatchJob
from bulk.service import start_bulk
from bulk.submit import submit_pending
from engagements.models import Engagement
from extraction.models import ClauseTask, ClauseType, ExtractionRun
from tests.integration.extraction_fixtures import ANSWERS, clause_types, make_contract
from tests.markup import elements
from tests.mock_anthropic import FakeClaude
from tests.mock_anthropic_batches import BatchAPI

pytestmark = pytest.mark.django_db
NAMES = ["Payment", "Governing Law", "Non-Compete"]


@pytest.fixture
def people(engagement, make_member):
    return {role: make_member(engagement, role) for role in ("admin", "auditor", "manager")}


def _batched_run(engagement, document):
    clause_types(NAMES)
    run = start_bulk(engagement, clause_types=NAMES, engine="anthropic", enqueue=False)
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    client = api.client()
    item = run.batch_items.get(task__clause_type__name="Governing Law")
    api.plan[item.custom_id] = ["expired", "expired", "expired"]
    for _ in range(3):
        for job in submit_pending(run, client=client):
            poll.refresh(job, client)
            harvest(job, client=client)
    run.refresh_from_db()
    return run


def test_batch_page_shows_each_batch_with_counts_retries_tokens_and_cost(client, engagement, people):
    document = make_contract(engagement)
    run = _batched_run(engagement, document)
    assert run.status == "failed"
    client.force_login(people["auditor"])
    page = client.get(reverse("bulk:run", args=[run.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    jobs = list(BatchJob.objects.filter(run=run).order_by("sequence"))
    assert len(jobs) == 3
    for job in jobs:
        assert job.batch_id in html
    assert 'id="bulk-batches"' in html and "Harvested" in html
    first = jobs[0]
    assert (first.n_succeeded, first.n_expired, first.retries) == (2, 1, 0)
    assert jobs[1].retries == 1 and jobs[2].retries == 1
    assert f"{first.input_tokens} / {first.output_tokens}" in html
    assert f"{first.cost_usd:.4f}" in html and "50% of standard" in html
    # the request that expired three times is shown for a person to look at
    assert 'id="bulk-failed"' in html and "3 batches in a row" in html and document.title in html
    # not polling any more: the run has ended
    assert 'data-active="false"' in html
    # where its results are: each document, linked to the page its clauses are reviewed on
    documents = html[html.index('id="bulk-documents"') :]
    assert f'href="{reverse("document", args=[document.pk])}"' in documents
    assert re.search(
        r"<td class=\"num\">2</td>\s*<td class=\"num\">1</td><td class=\"num\">3</td>", documents
    )

    fragment = client.get(reverse("bulk:run-status", args=[run.pk]))
    assert fragment.status_code == 200 and "<html" not in fragment.content.decode()

    listing = client.get(reverse("bulk:runs")).content.decode()
    assert f"Run {progress.number(run)}</a>" in listing and engagement.name in listing
    assert reverse("bulk:run", args=[run.pk]) in listing


def test_a_bulk_runs_clauses_export_from_its_page_without_other_runs_answers(
    client, engagement, people, make_member
):
    import json

    from extraction.models import Extraction

    document = make_contract(engagement)
    run = _batched_run(engagement, document)
    earlier = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
    Extraction.objects.create(
        run=earlier,
        document=document,
        clause_type=ClauseType.objects.get(name="Payment"),
        status="not_found",
        engine="offline",
        dedupe_key="not_found",
    )
    client.force_login(people["auditor"])
    page = client.get(reverse("bulk:run", args=[run.pk])).content.decode()
    for fmt in ("csv", "json", "xlsx"):
        assert f'href="{reverse("run-export", args=[run.pk, fmt])}"' in page

    response = client.get(reverse("run-export", args=[run.pk, "json"]))
    assert (
        response["Content-Disposition"] == f'attachment; filename="acme-audit-2026-run-{run.pk}-clauses.json"'
    )
    data = json.loads(response.getvalue())
    assert data["run"]["id"] == run.pk and data["run"]["engine"] == "anthropic"
    assert sorted(r["extraction_id"] for r in data["clauses"]) == sorted(
        Extraction.objects.filter(run=run).values_list("pk", flat=True)
    )
    assert data["clauses"] and {r["run_id"] for r in data["clauses"]} == {run.pk}

    client.force_login(make_member(Engagement.objects.create(name="Other audit"), "admin"))
    assert client.get(reverse("run-export", args=[run.pk, "csv"])).status_code == 404


def test_each_progress_bar_says_what_it_counts(client, engagement, people):
    """A progress bar with no name is read as a bare "progress bar, 100%" (the documents table names theirs)."""
    run = _batched_run(engagement, make_contract(engagement))
    client.force_login(people["auditor"])
    listing = elements(client.get(reverse("bulk:runs")).content.decode(), "progress")
    assert [bar.get("aria-label") for bar in listing] == [f"Progress of bulk run 1 of {engagement.name}"]
    page = elements(client.get(reverse("bulk:run", args=[run.pk])).content.decode(), "progress")
    assert [bar.get("aria-label") for bar in page] == ["Progress of bulk run 1"] + [
        f"Progress of batch {n}" for n in (1, 2, 3)
    ]


def test_the_run_cost_says_which_part_is_at_the_batch_price(client, engagement, people):
    """The run's total, which includes an untyped contract's type question at the standard price, was all
    labelled "batch price, 50% of standard"."""
    from extraction.usage import Usage, cost_usd

    make_contract(engagement, doc_type="")
    clause_types(NAMES)
    run = start_bulk(engagement, clause_types=NAMES, engine="anthropic", enqueue=False)
    api = BatchAPI(FakeClaude(dict(ANSWERS), doc_type=("Supply", "MASTER SUPPLY AGREEMENT")))
    client_ = api.client()
    (job,) = submit_pending(run, client=client_)
    run.refresh_from_db()
    question = run.cost_usd
    assert (
        question
        == cost_usd(
            Usage(run.input_tokens, run.output_tokens, run.cache_write_tokens, run.cache_read_tokens),
            run.model,
            batch=False,
        )
        > 0
    )
    poll.refresh(job, client_)
    harvest(job, client=client_)
    run.refresh_from_db()
    job.refresh_from_db()
    assert job.cost_usd > 0 and run.cost_usd == question + job.cost_usd

    client.force_login(people["auditor"])
    html = client.get(reverse("bulk:run", args=[run.pk])).content.decode()
    assert f"${run.cost_usd:.4f}" in html
    assert f"${job.cost_usd:.4f} for the batched requests, at the batch price, 50% of standard" in html
    assert f"${question:.4f} for the contract-type questions, asked one by one at the standard price" in html


def test_runs_of_other_engagements_are_404_and_hidden(client, engagement, people, make_member):
    document = make_contract(engagement)
    clause_types(NAMES)
    run = start_bulk(engagement, clause_types=NAMES, engine="offline", enqueue=False)
    other = Engagement.objects.create(name="Other audit")
    outsider = make_member(other, "admin")
    client.force_login(outsider)
    assert client.get(reverse("bulk:run", args=[run.pk])).status_code == 404
    assert client.get(reverse("bulk:run-status", args=[run.pk])).status_code == 404
    listing = client.get(reverse("bulk:runs")).content.decode()
    assert reverse("bulk:run", args=[run.pk]) not in listing and engagement.name not in listing
    assert client.get(reverse("bulk:new", args=[engagement.pk])).status_code == 404
    assert (
        client.post(
            reverse("bulk:new", args=[engagement.pk]), {"clause_types": [], "engine": "offline"}
        ).status_code
        == 404
    )
    # a sync run is not a bulk run
    sync = ExtractionRun.objects.create(engagement=engagement, engine="offline")
    client.force_login(people["admin"])
    assert client.get(reverse("bulk:run", args=[sync.pk])).status_code == 404
    assert document


def test_every_member_reaches_the_bulk_runs_from_the_header_the_morning_after(client, engagement, people):
    # the list was linked only from the form that starts a run: an auditor waiting for results had no way there
    make_contract(engagement)
    clause_types(NAMES)
    run = start_bulk(engagement, clause_types=NAMES, engine="offline", enqueue=False)
    for user in people.values():
        client.force_login(user)
        header = client.get(reverse("home")).content.decode()
        nav = re.search(r'<nav aria-label="Main">(.*?)</nav>', header, re.S).group(1)
        assert f'href="{reverse("bulk:runs")}"' in nav and "Bulk runs" in nav
        listed = client.get(reverse("bulk:runs")).content.decode()
        assert f'href="{reverse("bulk:run", args=[run.pk])}"' in listed


@pytest.mark.parametrize("role", ["auditor", "manager"])
def test_only_admins_start_a_bulk_run(client, engagement, people, role):
    make_contract(engagement)
    types = clause_types(NAMES)
    client.force_login(people[role])
    assert client.get(reverse("bulk:new", args=[engagement.pk])).status_code == 403
    response = client.post(
        reverse("bulk:new", args=[engagement.pk]),
        {"clause_types": [t.pk for t in types], "engine": "offline"},
    )
    assert response.status_code == 403
    assert not ExtractionRun.objects.exists()


def test_admin_starts_an_offline_bulk_run_from_the_form(
    client, engagement, people, django_capture_on_commit_callbacks, monkeypatch
):
    document = make_contract(engagement)
    make_contract(engagement, title="Second supply agreement")
    types = clause_types(NAMES)
    sent = []
    monkeypatch.setattr("extraction.tasks.extract_document.apply_async", lambda args, **kw: sent.append(args))
    client.force_login(people["admin"])
    form = client.get(reverse("bulk:new", args=[engagement.pk]))
    assert form.status_code == 200 and "Governing Law" in form.content.decode()
    boxes = re.findall(r'<input type="checkbox" name="clause_types"[^>]*>', form.content.decode())
    assert len(boxes) == ClauseType.objects.filter(active=True).count() and all("checked" in b for b in boxes)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("bulk:new", args=[engagement.pk]),
            {"clause_types": [t.pk for t in types], "documents": [document.pk], "engine": "offline"},
        )
    run = ExtractionRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("bulk:run", args=[run.pk])
    assert (run.mode, run.engine, run.created_by) == ("batch", "offline", people["admin"])
    assert ClauseTask.objects.filter(run=run).count() == 3
    assert sent == [(run.pk, document.pk)]
    page = client.get(response["Location"]).content.decode()
    assert "0 done" in page and 'data-active="true"' in page


def test_form_refuses_claude_without_a_key_and_an_empty_choice(client, engagement, people, settings):
    make_contract(engagement)
    types = clause_types(NAMES)
    settings.ANTHROPIC_API_KEY = ""
    client.force_login(people["admin"])
    url = reverse("bulk:new", args=[engagement.pk])
    no_key = client.post(url, {"clause_types": [types[0].pk], "engine": "anthropic"})
    assert no_key.status_code == 422 and "ANTHROPIC_API_KEY" in no_key.content.decode()
    empty = client.post(url, {"clause_types": [], "engine": "offline"})
    assert empty.status_code == 422
    assert not ExtractionRun.objects.exists()


@pytest.mark.parametrize("engine", ["offline", "anthropic"])
def test_a_bulk_run_started_while_the_queue_is_down_is_no_server_error(
    client, engagement, people, settings, django_capture_on_commit_callbacks, monkeypatch, engine
):
    from kombu.exceptions import OperationalError

    def down(*args, **kwargs):
        raise OperationalError("Error 111 connecting to localhost:6379. Connection refused.")

    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    monkeypatch.setattr("extraction.tasks.extract_document.apply_async", down)
    monkeypatch.setattr("bulk.tasks.submit_run.delay", down)
    document = make_contract(engagement)
    client.force_login(people["admin"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("bulk:new", args=[engagement.pk]),
            {
                "clause_types": [t.pk for t in clause_types(NAMES)],
                "documents": [document.pk],
                "engine": engine,
            },
        )
    run = ExtractionRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("bulk:run", args=[run.pk])
    run.refresh_from_db()
    if engine == "offline":  # nothing would ever run it: it says so instead of staying queued
        assert run.status == "failed"
        assert set(ClauseTask.objects.filter(run=run).values_list("error", flat=True)) == {
            "The task queue could not be reached, so this run never started; start it again."
        }
    else:  # the beat's poll submits it once the queue is back
        assert poll.runs_waiting() == [run.pk]


def test_the_page_says_when_the_api_cannot_be_asked_about_a_batch(client, engagement, people):
    """A batch the poll could not ask about (deleted in the Console, a revoked key) or whose results could
    not be downloaded used to show 'In progress' / 'Ended' for ever, the error in the worker's log only."""
    import anthropic

    make_contract(engagement)
    clause_types(NAMES)
    run = start_bulk(engagement, clause_types=NAMES, engine="anthropic", enqueue=False)
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    (job,) = submit_pending(run, client=api.client())
    kept = api._batches.pop(job.batch_id)  # as if the API no longer knew it
    assert poll.poll_active(client=api.client()).errors
    client.force_login(people["auditor"])
    page = client.get(reverse("bulk:run", args=[run.pk])).content.decode()
    job.refresh_from_db()
    assert job.state == "in_progress" and "not_found_error" in job.error
    assert "The API could not be asked about this batch" in page and 'data-active="true"' in page

    api._batches[job.batch_id] = kept  # it answers again: the note goes
    poll.poll_active(client=api.client())
    job.refresh_from_db()
    assert job.state == "ended" and job.error == ""

    api._batches.pop(job.batch_id)  # its results cannot be downloaded
    with pytest.raises(anthropic.NotFoundError):
        harvest(job, client=api.client())
    job.refresh_from_db()
    assert (
        job.state == "ended" and "results could not be read" in job.error and "not_found_error" in job.error
    )
    assert "results could not be read" in client.get(reverse("bulk:run", args=[run.pk])).content.decode()

    api._batches[job.batch_id] = kept
    assert harvest(job, client=api.client()).outcomes == {"stored": 3}
    job.refresh_from_db()
    assert job.state == "harvested" and job.error == ""


def test_a_run_that_cannot_be_sent_for_want_of_a_key_says_so_until_it_is_sent(
    client, engagement, people, settings
):
    from extraction.outcome import EngineError

    make_contract(engagement)
    clause_types(NAMES)
    run = start_bulk(engagement, clause_types=NAMES, engine="anthropic", enqueue=False)
    settings.ANTHROPIC_API_KEY = ""  # removed after the run was started: every poll's submit fails
    with pytest.raises(EngineError):
        submit_pending(run)
    client.force_login(people["auditor"])
    html = client.get(reverse("bulk:run-status", args=[run.pk])).content.decode()
    assert "could not be sent" in html and "ANTHROPIC_API_KEY is not set" in html  # before: only in the log

    settings.ANTHROPIC_API_KEY = "sk-test"
    assert submit_pending(run, client=BatchAPI(FakeClaude(dict(ANSWERS))).client())
    run.refresh_from_db()
    assert run.error == ""
    assert "could not be sent" not in client.get(reverse("bulk:run-status", args=[run.pk])).content.decode()


def test_a_bulk_run_whose_documents_were_deleted_says_so_and_stops_polling(client, engagement, people):
    from extraction.run_status import NOTHING_LEFT

    document = make_contract(engagement)
    clause_types(NAMES)
    run = start_bulk(engagement, clause_types=NAMES, engine="anthropic", enqueue=False)
    document.delete()  # by an admin, before its requests were sent
    assert submit_pending(run, client=BatchAPI(FakeClaude(dict(ANSWERS))).client()) == []
    client.force_login(people["auditor"])
    html = client.get(reverse("bulk:run", args=[run.pk])).content.decode()
    assert 'data-active="false"' in html and "hx-trigger" not in html  # not "queued", polled for ever
    assert NOTHING_LEFT in html


def test_the_django_admin_shows_batches_but_cannot_delete_or_change_them(
    client, engagement, django_user_model
):
    # deleting a batch's row in the admin cancelled nothing at the API and left its requests "submitted" to a
    # batch no row followed: the run never ended
    run = _batched_run(engagement, make_contract(engagement))
    job, item = run.batch_jobs.first(), run.batch_items.first()
    client.force_login(django_user_model.objects.create_superuser("root", password="x-long-password-1"))
    for model, row in (("batchjob", job), ("batchitem", item)):
        assert client.get(reverse(f"admin:bulk_{model}_change", args=[row.pk])).status_code == 200  # readable
        assert (
            client.post(reverse(f"admin:bulk_{model}_delete", args=[row.pk]), {"post": "yes"}).status_code
            == 403
        )
        assert client.get(reverse(f"admin:bulk_{model}_add")).status_code == 403
    assert BatchJob.objects.filter(pk=job.pk).exists() and run.batch_items.filter(pk=item.pk).exists()


def test_bulk_runs_are_numbered_in_their_engagement_not_by_the_ids_other_runs_share(
    client, engagement, people, make_member
):
    # a fresh install's first bulk run was "Bulk run 21": uploads, Find a clause and benchmarks take run ids too
    make_contract(engagement)
    clause_types(NAMES)
    for _ in range(20):
        ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
    first = start_bulk(engagement, clause_types=NAMES, engine="offline", enqueue=False)
    other = Engagement.objects.create(name="Other audit")
    make_contract(other, title="Other supply agreement")
    elsewhere = start_bulk(other, clause_types=NAMES, engine="offline", enqueue=False)
    second = start_bulk(engagement, clause_types=NAMES, engine="offline", enqueue=False)
    assert first.pk > 20 and elsewhere.pk < second.pk
    client.force_login(people["auditor"])
    page = client.get(reverse("bulk:run", args=[first.pk])).content.decode()
    assert re.search(r"<h1>Bulk run 1</h1>", page) and f"Bulk run {first.pk}" not in page
    assert "<h1>Bulk run 2</h1>" in client.get(reverse("bulk:run", args=[second.pk])).content.decode()
    make_member(other, "auditor", username=people["auditor"].username + "-other")
    listing = client.get(reverse("bulk:runs")).content.decode()
    assert [a for a in re.findall(r">(Run \d+)</a>", listing)] == ["Run 2", "Run 1"]


def test_admin_is_told_the_bulk_runs_number_in_the_engagement(client, engagement, people, monkeypatch):
    document = make_contract(engagement)
    types = clause_types(NAMES)
    ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
    monkeypatch.setattr("extraction.tasks.extract_document.apply_async", lambda args, **kw: None)
    client.force_login(people["admin"])
    response = client.post(
        reverse("bulk:new", args=[engagement.pk]),
        {"clause_types": [t.pk for t in types], "documents": [document.pk], "engine": "offline"},
        follow=True,
    )
    assert f"Bulk run 1 of {engagement.name} started" in response.content.decode()


def test_a_bulk_run_with_a_clause_in_progress_is_not_shown_queued(client, engagement, people):
    make_contract(engagement)
    clause_types(NAMES)
    run = start_bulk(engagement, clause_types=NAMES, engine="offline", enqueue=False)
    ClauseTask.objects.filter(pk=run.tasks.first().pk).update(status=ClauseTask.Status.RUNNING)
    assert ExtractionRun.objects.get(pk=run.pk).status == "queued"  # the row has not caught up yet
    client.force_login(people["auditor"])
    for url in (reverse("bulk:run", args=[run.pk]), reverse("bulk:run-status", args=[run.pk])):
        html = client.get(url).content.decode()
        (status,) = [c for c in elements(html, cls="chip") if re.search(r"\brun-", c["class"])]
        assert "run-running" in status["class"].split(), status
        assert "1 in progress" in html and ">queued<" not in html
    listing = client.get(reverse("bulk:runs")).content.decode()
    assert "run-running" in listing and ">queued<" not in listing
