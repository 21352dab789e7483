"""The audit trail keeps the answers the server refused: a clause that passes verification on its retry
keeps its first try (what it said, what it quoted, why it was refused) on the extraction, in the clause's
history on the review page and in the exports."""

from __future__ import annotations

import csv
import html
import json
from io import BytesIO, StringIO

import pytest
from django.urls import reverse
from openpyxl import load_workbook

from extraction import launch, pipeline
from extraction.agent.engine import AnthropicEngine
from extraction.models import Extraction
from tests.integration.extraction_fixtures import ANSWERS, clause_types, make_contract
from tests.mock_anthropic import FakeClaude, MockAnthropic

pytestmark = pytest.mark.django_db
REFUSED_TEXT = "The parties agree to a cap of about $250 on all claims."  # FakeClaude's wrong quote


def _extract(engagement, document, api, names):
    run = launch.create_run(
        engagement, documents=[document], clause_types=clause_types(names), engine="anthropic", enqueue=False
    )
    engine = AnthropicEngine(client=api.client(max_retries=0), model="claude-sonnet-4-6", max_turns=4)
    assert pipeline.process_document(run.pk, document.pk, engine=engine) == "done"
    return run


def test_an_answer_refused_once_then_accepted_keeps_the_refused_attempt_with_its_error(
    engagement, make_member, client
):
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS), wrong_quote={"Cap On Liability": 1}))
    run = _extract(engagement, document, api, ["Cap On Liability"])

    ex = Extraction.objects.get(run=run)
    assert ex.status == "found" and ex.clause_text == ANSWERS["Cap On Liability"]
    assert ex.verification_errors == []  # verified: nothing flags it
    (refused,) = ex.refused_attempts
    assert refused["attempt"] == 1 and refused["call"] is None
    assert refused["clause_text"] == REFUSED_TEXT
    (quoted,) = refused["citations"]
    assert quoted["quote"] == REFUSED_TEXT and quoted["chunk_id"]
    assert any("not found in chunk" in e for e in refused["errors"])

    # the clause's history on the review page shows it, with its error
    client.force_login(make_member(engagement, "auditor"))
    page = html.unescape(
        client.get(reverse("clause", args=[document.pk, ex.pk]), HTTP_HX_REQUEST="true").content.decode()
    )
    history = page[page.index('aria-label="History"') :]
    assert 'id="refused-attempts"' in history and "attempt 1" in history
    assert REFUSED_TEXT in history and refused["errors"][0] in history

    # and so do the exports
    url = lambda fmt: reverse("document-export", args=[document.pk, fmt])  # noqa: E731
    (record,) = [
        r for r in json.loads(client.get(url("json")).getvalue())["clauses"] if r["extraction_id"] == ex.pk
    ]
    assert record["refused_attempts"] == ex.refused_attempts
    rows = list(csv.DictReader(StringIO(client.get(url("csv")).getvalue().decode("utf-8-sig"))))
    (line,) = next(r for r in rows if r["extraction_id"] == str(ex.pk))["refused_attempts"].splitlines()
    assert line.startswith(f"attempt 1: “{REFUSED_TEXT}”") and "not found in chunk" in line
    sheet = list(
        load_workbook(BytesIO(client.get(url("xlsx")).getvalue())).active.iter_rows(values_only=True)
    )
    cells = next(r for r in sheet[1:] if r[sheet[0].index("extraction_id")] == ex.pk)
    assert cells[sheet[0].index("refused_attempts")] == line


def test_a_clause_refused_twice_keeps_both_attempts_beside_its_flag(engagement):
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS), wrong_quote={"Cap On Liability": 2}))
    run = _extract(engagement, document, api, ["Cap On Liability"])

    ex = Extraction.objects.get(run=run)
    assert ex.status == "unverified"
    assert [a["attempt"] for a in ex.refused_attempts] == [1, 2]
    assert all(a["errors"] and a["clause_text"] == REFUSED_TEXT for a in ex.refused_attempts)


def test_an_answer_accepted_at_once_has_no_refused_attempt(engagement):
    document = make_contract(engagement)
    run = _extract(engagement, document, MockAnthropic(FakeClaude(dict(ANSWERS))), ["Cap On Liability"])
    assert Extraction.objects.get(run=run).refused_attempts == []


def test_a_bulk_request_refused_in_one_batch_and_accepted_in_the_next_keeps_the_refused_attempt(engagement):
    from bulk import poll
    from bulk.harvest import harvest
    from bulk.service import start_bulk
    from bulk.submit import submit_pending
    from tests.mock_anthropic_batches import BatchAPI

    make_contract(engagement)
    clause_types(["Cap On Liability"])
    run = start_bulk(
        engagement, clause_types=["Cap On Liability"], documents=None, engine="anthropic", enqueue=False
    )
    api = BatchAPI(FakeClaude(dict(ANSWERS), wrong_quote={"Cap On Liability": 1}))
    client = api.client()
    for _ in range(2):  # the refused answer's batch, then its retry's
        for job in submit_pending(run, client=client):
            poll.refresh(job, client)
            harvest(job, client=client)

    ex = Extraction.objects.get(run=run)
    assert ex.status == "found"
    (refused,) = ex.refused_attempts
    assert refused["clause_text"] == REFUSED_TEXT and any(
        "not found in chunk" in e for e in refused["errors"]
    )
