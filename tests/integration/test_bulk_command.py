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
