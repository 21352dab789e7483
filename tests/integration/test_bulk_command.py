"""``manage.py bulk_extract``: the Message Batches path against a served mock API (poll, harvest,
retry until done), and the offline path in this process, both idempotent and scoped to the engagement."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from bulk.models import BatchItem, BatchJob
from extraction.models import ClauseTask, Extraction, ExtractionRun
from tests.integration.extraction_fixtures import ANSWERS, clause_types, make_contract
from tests.mock_anthropic import FakeClaude, serve
from tests.mock_anthropic_batches import BatchAPI

pytestmark = pytest.mark.django_db


@pytest.fixture
def served(settings):
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    url, stop = serve(api)
    api.results_base = url
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    settings.ANTHROPIC_BASE_URL = url
    settings.ANTHROPIC_MAX_RETRIES = 0
    yield api
    stop()


def test_batches_path_submits_polls_harvests_and_retries_until_done(engagement, served, capsys):
    first = make_contract(engagement)
    second = make_contract(engagement, title="Second supply agreement")
    clause_types(["Payment", "Governing Law"])
    # Governing Law expires in the first batch and goes round again
    served.rules.append(
        lambda cid, params, attempt: (
            "expired"
            if attempt == 1 and "find the Governing Law" in params["messages"][0]["content"][0]["text"]
            else None
        )
    )
    call_command(
        "bulk_extract",
        "--engagement",
        engagement.name,
        "--clause-types",
        "Payment",
        "Governing Law",
        "--documents",
        str(first.pk),
        second.original_name,
        "--engine",
        "anthropic",
        "--wait",
        "--poll-seconds",
        "0",
    )
    out = capsys.readouterr().out
    run = ExtractionRun.objects.get()
    assert f"bulk run {run.pk}: 2 documents × 2 clause types = 4 clause tasks" in out
    assert "batch 1: msgbatch_" in out and "done" in out
    assert run.status == "done" and run.mode == "batch" and run.engine == "anthropic"
    assert Extraction.objects.filter(run=run).count() == 4
    jobs = list(BatchJob.objects.filter(run=run).order_by("sequence"))
    assert [(j.request_count, j.n_expired, j.retries) for j in jobs] == [(4, 2, 0), (2, 0, 2)]
    assert "harvested batch 1" in out and "(2 retries)" in out


def test_a_batch_the_api_refused_is_sent_again_and_its_requests_are_counted_as_retries(
    engagement, settings, monkeypatch, capsys
):
    from bulk import submit
    from bulk.management.commands import bulk_extract
    from tests.mock_anthropic import MockAnthropic

    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    api.create_script.append(MockAnthropic.overloaded())  # the first creation is turned away
    for module in (submit, bulk_extract):
        monkeypatch.setattr(module, "make_client", lambda **kw: api.client(max_retries=0))
    make_contract(engagement)
    clause_types(["Payment", "Governing Law"])
    call_command(
        "bulk_extract",
        "--engagement",
        engagement.name,
        "--clause-types",
        "Payment",
        "Governing Law",
        "--engine",
        "anthropic",
        "--wait",
        "--poll-seconds",
        "0",
    )
    out = capsys.readouterr().out
    run = ExtractionRun.objects.get()
    assert run.status == "done" and Extraction.objects.filter(run=run).count() == 2
    refused, sent = BatchJob.objects.filter(run=run).order_by("sequence")
    assert refused.state == "failed" and "overloaded_error" in refused.error
    assert (sent.request_count, sent.retries) == (2, 2)  # sent a second time: retries, not "0 retries"
    assert "batch 1: — · 2 requests" in out and "overloaded_error" in out
    assert "batch 2: msgbatch_" in out and "(2 retries)" in out and "(0 retries)" not in out


def test_offline_inline_path_and_its_errors(engagement, capsys):
    document = make_contract(engagement)
    clause_types(["Payment", "Non-Compete"])
    call_command(
        "bulk_extract",
        "--engagement",
        engagement.name,
        "--clause-types",
        "Payment",
        "non-compete",
        "--engine",
        "offline",
        "--inline",
    )
    out = capsys.readouterr().out
    run = ExtractionRun.objects.get()
    assert run.status == "done" and run.engine == "offline" and run.mode == "batch"
    assert set(ClauseTask.objects.filter(run=run).values_list("status", flat=True)) == {"done"}
    assert Extraction.objects.filter(run=run, document=document).count() == 2
    assert "done" in out and not BatchItem.objects.exists()

    with pytest.raises(CommandError, match="unknown clause type"):
        call_command(
            "bulk_extract", "--engagement", engagement.name, "--clause-types", "Nope", "--engine", "offline"
        )
    with pytest.raises(CommandError, match="no engagement"):
        call_command("bulk_extract", "--engagement", "Missing", "--clause-types", "Payment")
    with pytest.raises(CommandError, match="not ready documents"):
        call_command(
            "bulk_extract",
            "--engagement",
            engagement.name,
            "--clause-types",
            "Payment",
            "--documents",
            "999999",
            "--engine",
            "offline",
        )
