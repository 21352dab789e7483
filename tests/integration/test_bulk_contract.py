"""A Claude bulk run held to the Message Batches API's contract (``tests.anthropic_contract``, which the
batch mock applies to every creation and every request): the requests the agent builds are ones the API
takes, and the run ends with every clause stored. The relay once copied the SDK's ``timeout`` option into
each request's params, and the API refused every batch: ``requests.0.params.timeout: Extra inputs are not
permitted``."""

from __future__ import annotations

import pytest

from bulk import poll, relay
from bulk.harvest import harvest
from bulk.models import BatchItem, BatchJob
from bulk.service import start_bulk
from bulk.submit import submit_pending
from extraction.models import Extraction
from tests.anthropic_contract import batch_errors, conversation_errors
from tests.integration.extraction_fixtures import ANSWERS, clause_types, make_contract
from tests.mock_anthropic import FakeClaude
from tests.mock_anthropic_batches import BatchAPI

pytestmark = pytest.mark.django_db
NAMES = ["Payment", "Governing Law", "Cap On Liability", "Non-Compete"]  # Non-Compete: not in the contract


def _start(engagement):
    clause_types(NAMES)
    return start_bulk(engagement, clause_types=NAMES, engine="anthropic", enqueue=False)


def test_a_claude_bulk_run_through_the_strict_batch_api_completes(engagement):
    make_contract(engagement)
    run = _start(engagement)
    api = BatchAPI(FakeClaude(dict(ANSWERS), wrong_quote={"Cap On Liability": 1}))  # one goes round twice
    client = api.client()
    for _ in range(3):
        for job in submit_pending(run, client=client):
            assert job.state == BatchJob.State.IN_PROGRESS, job.error
            poll.refresh(job, client)
            harvest(job, client=client)
        if not BatchItem.objects.filter(run=run).exclude(state=BatchItem.State.DONE).exists():
            break

    assert api.refusals == []  # no creation refused, no request came back errored
    assert len(api.created) == 2  # the retry after a failed verification went into a second batch
    for created in api._batches.values():
        assert batch_errors({"requests": created["requests"]}) == []
        assert all(conversation_errors(r["params"]) == [] for r in created["requests"])
    run.refresh_from_db()
    assert run.status == "done"
    found = dict(Extraction.objects.filter(run=run).values_list("clause_type__name", "status"))
    assert found == {
        "Payment": "found",
        "Governing Law": "found",
        "Cap On Liability": "found",
        "Non-Compete": "not_found",
    }


def test_the_params_the_relay_used_to_hand_over_are_refused_whole(engagement, monkeypatch):
    """What made the real API refuse every bulk run: the call's keyword arguments as the agent passed
    them (``timeout`` with them) taken for the request body."""
    monkeypatch.setattr(relay, "request_body", dict)
    make_contract(engagement)
    run = _start(engagement)
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    (job,) = submit_pending(run, client=api.client())
    assert job.state == BatchJob.State.FAILED and not api.created
    assert api.refusals == ["requests.0.params.timeout: Extra inputs are not permitted"]
    assert "requests.0.params.timeout: Extra inputs are not permitted" in job.error
