"""Bulk runs through the Message Batches API, with the real ``anthropic`` client over a mock transport
playing the batches endpoints (create, retrieve, results as JSONL): mixed results, retries with the
error text in the next message, max_tokens checkpointed and resumed, three failures in a row, a
re-harvest that adds nothing, and a split at the size and count limits."""

from __future__ import annotations

import json

import httpx2
import pytest

from bulk import poll
from bulk.custom_ids import parse
from bulk.harvest import harvest
from bulk.models import BatchItem, BatchJob
from bulk.service import start_bulk
from bulk.split import Limits
from bulk.submit import submit_pending
from extraction.agent.case_facts import parse_case_facts
from extraction.models import Checkpoint, Citation, ClauseTask, Extraction
from tests.integration.extraction_fixtures import ANSWERS, PAGE_OF, clause_types, make_contract
from tests.mock_anthropic import FakeClaude, MockAnthropic
from tests.mock_anthropic_batches import BatchAPI

pytestmark = pytest.mark.django_db
FIVE = ["Payment", "Governing Law", "Cap On Liability", "Anti-Assignment", "Non-Compete"]


def _start(engagement, names=FIVE, documents=None):
    clause_types(names)
    return start_bulk(engagement, clause_types=names, documents=documents, engine="anthropic", enqueue=False)


def _cid(run, document, name):
    return BatchItem.objects.get(run=run, task__document=document, task__clause_type__name=name).custom_id


def _round(run, api, client, **submit_kw):
    """Submit what is pending, let the batches end, harvest them; returns the new jobs."""
    jobs = submit_pending(run, client=client, **submit_kw)
    for job in jobs:
        poll.refresh(job, client)
        assert job.state == BatchJob.State.ENDED
        harvest(job, client=client)
        job.refresh_from_db()
    return jobs


def _last_user_text(params) -> str:
    content = params["messages"][-1]["content"]
    return "\n".join(
        b.get("text", "") if b.get("type") == "text" else str(b.get("content", "")) for b in content
    )


def _picture(run):
    out = {}
    for ex in Extraction.objects.filter(run=run).select_related("clause_type").prefetch_related("citations"):
        out[ex.clause_type.name] = (
            ex.status,
            ex.clause_text,
            tuple((c.page, c.start, c.end, c.quote) for c in ex.citations.all()),
        )
    return out


def test_requests_are_the_synchronous_agents_forced_single_shot(engagement):
    document = make_contract(engagement)
    run = _start(engagement)
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    (job,) = submit_pending(run, client=api.client())
    assert job.state == BatchJob.State.IN_PROGRESS and job.batch_id.startswith("msgbatch_")
    assert job.request_count == 5 and job.retries == 0
    (created,) = api.created
    assert created["bytes"] == job.size_bytes  # our size count is the SDK's body, byte for byte
    requests = api._batches[job.batch_id]["requests"]
    for req in requests:
        key = parse(req["custom_id"])
        task = ClauseTask.objects.get(run=run, document_id=key.document_id, clause_type_id=key.clause_type_id)
        assert key.run_id == run.pk and task.status == ClauseTask.Status.RUNNING
        p = req["params"]
        assert p["tool_choice"] == {"type": "any"}  # single shot: the answer tools are the only tools
        assert [t["name"] for t in p["tools"]] == ["extract_clause", "report_not_found"]
        assert p["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert p["system"][0]["cache_control"] == {"type": "ephemeral"}
        facts = parse_case_facts(p["system"][1]["text"])
        assert facts["policy_cap"] == "$247.83" and facts["doc_id"] == str(document.pk)
        question = p["messages"][0]["content"][0]["text"]
        assert f"find the {task.clause_type.name} clause" in question and "chunk:" in question
        assert len(p["messages"]) == 1
    # every request shares the invariant prefix (one cache entry for the whole batch)
    assert len({r["params"]["system"][0]["text"] for r in requests}) == 1

    # the same question through the synchronous path sends the same prompt and tools
    from extraction import launch
    from extraction.agent.engine import AnthropicEngine
    from extraction.pipeline import process_document
    from tests.mock_anthropic import MockAnthropic

    sync = MockAnthropic(FakeClaude(dict(ANSWERS)))
    sync_run = launch.create_run(
        engagement,
        documents=[document],
        clause_types=clause_types(["Payment"]),
        engine="anthropic",
        enqueue=False,
    )
    process_document(
        sync_run.pk, document.pk, engine=AnthropicEngine(client=sync.client(), model=run.model, max_turns=1)
    )
    ours = next(
        r["params"]
        for r in requests
        if "find the Payment clause" in r["params"]["messages"][0]["content"][0]["text"]
    )
    theirs = sync.requests[0]
    assert ours["system"][0] == theirs["system"][0]
    assert (
        ours["messages"][0]["content"][0]["text"].split("clause_id:")[1]
        == theirs["messages"][0]["content"][0]["text"].split("clause_id:")[1]
    )
    assert [t["name"] for t in ours["tools"]] == [t["name"] for t in theirs["tools"]]
    assert [t["input_schema"] for t in ours["tools"]] == [t["input_schema"] for t in theirs["tools"]]
    assert ours["tool_choice"] == theirs["tool_choice"] and ours["max_tokens"] == theirs["max_tokens"]


def test_an_untyped_contract_is_typed_once_before_its_requests_are_built(engagement):
    document = make_contract(engagement, doc_type="")
    run = _start(engagement)
    api = BatchAPI(FakeClaude(dict(ANSWERS), doc_type=("Supply", "MASTER SUPPLY AGREEMENT")))
    (job,) = submit_pending(run, client=api.client())
    asked = [r for r in api.requests if (r.get("tool_choice") or {}).get("name") == "classify_document"]
    assert len(asked) == 1  # one question, sent at once, for the five requests of the document
    document.refresh_from_db()
    assert (document.doc_type, document.doc_type_source) == ("Supply", "model")
    for req in api._batches[job.batch_id]["requests"]:
        assert parse_case_facts(req["params"]["system"][1]["text"])["doc_type"] == "Supply"
    # the question is an ordinary Messages call: the run pays the standard rate for it, not the batch rate
    from extraction.usage import Usage, cost_usd

    run.refresh_from_db()
    spent = Usage(run.input_tokens, run.output_tokens, run.cache_write_tokens, run.cache_read_tokens)
    assert run.input_tokens > 0 and run.cost_usd == cost_usd(spent, run.model, batch=False)


def test_succeeded_errored_expired_canceled_then_the_retries_succeed(engagement):
    document = make_contract(engagement)
    run = _start(engagement)
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    client = api.client()
    api.plan[_cid(run, document, "Governing Law")] = ["errored", "succeeded"]
    api.plan[_cid(run, document, "Cap On Liability")] = ["expired", "succeeded"]
    api.plan[_cid(run, document, "Anti-Assignment")] = ["canceled", "succeeded"]

    (job,) = _round(run, api, client)
    assert (job.n_succeeded, job.n_errored, job.n_expired, job.n_canceled, job.n_processing) == (
        2,
        1,
        1,
        1,
        0,
    )
    assert (job.n_harvested, job.n_stored, job.n_requeued, job.n_failed) == (5, 2, 3, 0)
    assert job.state == BatchJob.State.HARVESTED and job.progress == 100
    assert job.input_tokens > 0 and job.output_tokens > 0 and job.cost_usd > 0
    assert set(_picture(run)) == {"Payment", "Non-Compete"}
    pending = {
        i.task.clause_type.name: i
        for i in BatchItem.objects.filter(run=run, state="pending").select_related("task__clause_type")
    }
    assert set(pending) == {"Governing Law", "Cap On Liability", "Anti-Assignment"}
    assert all(i.failures_in_row == 1 for i in pending.values())
    run.refresh_from_db()
    assert run.status == "running"

    (job2,) = _round(run, api, client)
    assert job2.sequence == 2 and job2.request_count == 3 and job2.retries == 3
    sent = {r["custom_id"]: r["params"] for r in api._batches[job2.batch_id]["requests"]}
    gl = _last_user_text(sent[_cid(run, document, "Governing Law")])
    assert "overloaded_error: Overloaded" in gl and job.batch_id in gl
    assert "expired" in _last_user_text(sent[_cid(run, document, "Cap On Liability")])
    assert "canceled" in _last_user_text(sent[_cid(run, document, "Anti-Assignment")])
    # the question itself is unchanged: the note is added to the same user turn
    assert all(len(p["messages"]) == 1 for p in sent.values())

    run.refresh_from_db()
    assert run.status == "done" and run.mode == "batch" and run.cost_usd > 0
    pic = _picture(run)
    assert set(pic) == set(FIVE)
    for name in FIVE:
        status, text, cites = pic[name]
        if ANSWERS[name] is None:
            assert status == "not_found" and not cites
            near = Extraction.objects.get(run=run, clause_type__name=name).closest  # the finder's nearest
            assert near["quote"] and document.text[near["start"] : near["end"]] == near["quote"]
        else:
            assert status == "found" and text == ANSWERS[name]
            ((page, start, end, quote),) = cites
            assert document.text[start:end] == quote and page == PAGE_OF[name]
    assert Extraction.objects.filter(run=run).count() == 5
    assert run.input_tokens == sum(BatchJob.objects.filter(run=run).values_list("input_tokens", flat=True))


def test_max_tokens_is_checkpointed_and_resumed_from_case_facts_in_the_next_batch(engagement):
    document = make_contract(engagement)
    run = _start(engagement)
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    client = api.client()
    cid = _cid(run, document, "Payment")
    api.plan[cid] = ["max_tokens", "succeeded"]

    (job,) = _round(run, api, client)
    assert job.n_max_tokens == 1 and job.n_requeued == 1
    item = BatchItem.objects.get(custom_id=cid)
    assert (item.state, item.last_result, item.failures_in_row) == ("pending", "max_tokens", 1)
    assert item.snapshot["position"]["max_tokens"] == 8192  # the agent doubled the budget
    cp = Checkpoint.objects.get(run=run, document=document)
    assert cp.case_facts["policy_cap"] == "$247.83"

    (job2,) = _round(run, api, client)
    (sent,) = api._batches[job2.batch_id]["requests"]
    params = sent["params"]
    assert params["max_tokens"] == 8192
    assert "stopped at max_tokens" in _last_user_text(params)
    facts = parse_case_facts(params["system"][1]["text"])  # rebuilt from the database for the resumed turn
    assert facts["extracted_count"] == 3 and facts["policy_cap"] == "$247.83"
    assert len(facts["decisions"]) == 4

    run.refresh_from_db()
    assert run.status == "done"
    # the final result equals an uninterrupted run
    plain = _start(engagement)
    _round(plain, api, client)
    assert _picture(run) == _picture(plain)


def test_a_reharvest_adds_nothing(engagement):
    document = make_contract(engagement)
    run = _start(engagement)
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    client = api.client()
    api.plan[_cid(run, document, "Payment")] = ["errored"]
    (job,) = _round(run, api, client)
    before = (
        Extraction.objects.count(),
        Citation.objects.count(),
        Checkpoint.objects.count(),
        list(BatchItem.objects.order_by("id").values_list("state", "failures_in_row", "batches")),
        BatchJob.objects.filter(pk=job.pk).values().get(),
    )
    assert before[0] == 4

    again = harvest(job, client=client, force=True)
    assert again.taken and again.lines == 5 and again.outcomes == {"skipped": 5}
    assert api.downloads[job.batch_id] == 2
    after = (
        Extraction.objects.count(),
        Citation.objects.count(),
        Checkpoint.objects.count(),
        list(BatchItem.objects.order_by("id").values_list("state", "failures_in_row", "batches")),
        BatchJob.objects.filter(pk=job.pk).values().get(),
    )
    for b, a in zip(before[:4], after[:4]):
        assert a == b
    moved = ("harvest_started_at", "harvested_at", "harvest_lease")
    assert {k: v for k, v in after[4].items() if k not in moved} == {
        k: v for k, v in before[4].items() if k not in moved
    }
    # a harvest that is not forced does not even take a harvested job
    assert harvest(job, client=client).taken is False


def test_three_failed_batches_in_a_row_fail_the_request_for_a_person(engagement):
    document = make_contract(engagement)
    run = _start(engagement, ["Governing Law", "Payment"])
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    client = api.client()
    cid = _cid(run, document, "Governing Law")
    api.plan[cid] = ["errored", "expired", "max_tokens", "succeeded"]
    for n in (1, 2, 3):
        (job,) = _round(run, api, client)
        item = BatchItem.objects.get(custom_id=cid)
        assert item.failures_in_row == n
    assert job.n_failed == 1
    assert item.state == "failed" and item.snapshot is None
    assert "3 batches in a row" in item.error and "max_tokens" in item.error
    task = ClauseTask.objects.get(pk=item.task_id)
    assert task.status == "failed" and "3 batches in a row" in task.error
    assert submit_pending(run, client=client) == []  # nothing left to send
    run.refresh_from_db()
    assert run.status == "failed" and "Governing Law" in run.error
    assert set(_picture(run)) == {"Payment"}


def test_a_failed_verification_is_retried_in_the_next_batch_with_the_verifiers_errors(engagement):
    make_contract(engagement)
    run = _start(engagement, ["Cap On Liability"])
    api = BatchAPI(FakeClaude(dict(ANSWERS), wrong_quote={"Cap On Liability": 1}))
    client = api.client()
    (job,) = _round(run, api, client)
    assert job.n_succeeded == 1 and job.n_requeued == 1 and job.n_stored == 0
    item = BatchItem.objects.get(run=run)
    assert item.state == "pending" and item.failures_in_row == 0 and item.last_result == "continued"
    (job2,) = _round(run, api, client)
    (sent,) = api._batches[job2.batch_id]["requests"]
    msgs = sent["params"]["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    result = msgs[-1]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"]
    assert "Citation verification failed" in result["content"]
    assert sent["params"]["tool_choice"] == {"type": "any"}
    assert "Answer now" in sent["params"]["system"][-1]["text"]
    ex = Extraction.objects.get(run=run)
    assert ex.status == "found" and ex.clause_text == ANSWERS["Cap On Liability"]


def test_batches_are_split_at_the_size_and_count_limits(engagement):
    docs = [make_contract(engagement, title=f"Supply {n}") for n in range(3)]
    names = ["Payment", "Governing Law"]
    clause_types(names)
    probe = start_bulk(engagement, clause_types=names, documents=docs[:1], engine="anthropic", enqueue=False)
    probe_api = BatchAPI(FakeClaude(dict(ANSWERS)))
    (probe_job,) = submit_pending(probe, client=probe_api.client())
    one = probe_job.size_bytes // 2  # about one request's bytes

    # size: a little over two requests per batch -> 6 requests in 3 batches; the mock refuses anything larger
    max_bytes = int(one * 2.6)
    run = start_bulk(engagement, clause_types=names, documents=docs, engine="anthropic", enqueue=False)
    api = BatchAPI(FakeClaude(dict(ANSWERS)), limits=(100, max_bytes))
    jobs = _round(run, api, api.client(), limits=Limits(max_requests=100, max_bytes=max_bytes))
    assert [j.request_count for j in jobs] == [2, 2, 2] and not api.refused
    assert all(c["bytes"] <= max_bytes for c in api.created)
    assert [c["bytes"] for c in api.created] == [j.size_bytes for j in jobs]
    ids = [cid for c in api.created for cid in c["custom_ids"]]
    assert len(ids) == len(set(ids)) == 6
    run.refresh_from_db()
    assert run.status == "done" and Extraction.objects.filter(run=run).count() == 6

    # count: at most 4 requests per batch
    run2 = start_bulk(engagement, clause_types=names, documents=docs, engine="anthropic", enqueue=False)
    api2 = BatchAPI(FakeClaude(dict(ANSWERS)), limits=(4, 10**9))
    jobs2 = _round(run2, api2, api2.client(), limits=Limits(max_requests=4))
    assert [j.request_count for j in jobs2] == [4, 2]
    assert [j.sequence for j in jobs2] == [1, 2]

    # the mock really enforces its limits: without our split the API refuses, and nothing is lost
    run3 = start_bulk(engagement, clause_types=names, documents=docs, engine="anthropic", enqueue=False)
    api3 = BatchAPI(FakeClaude(dict(ANSWERS)), limits=(100, max_bytes))
    (refused,) = submit_pending(run3, client=api3.client())
    assert refused.state == BatchJob.State.FAILED and "request_too_large" in refused.error
    assert BatchItem.objects.filter(run=run3, state="pending").count() == 6


def test_a_creation_turned_away_is_retried_whole_then_sent_again_from_the_saved_conversations(engagement):
    make_contract(engagement)
    run = _start(engagement)
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    api.create_script.append(MockAnthropic.overloaded())
    (turned_away,) = submit_pending(run, client=api.client(max_retries=1))
    # the body (streamed from its file) was sent whole, with its length, once: the next poll sends it again
    (first,) = api.posted
    assert json.loads(first["body"])["requests"]
    assert first["content_length"] == str(len(first["body"])) == str(turned_away.size_bytes)
    assert turned_away.state == BatchJob.State.FAILED and "overloaded_error" in turned_away.error
    assert turned_away.progress == 0  # the page's bar: nothing of it was processed
    items = list(BatchItem.objects.filter(run=run))
    assert {(i.state, i.batches, i.failures_in_row) for i in items} == {
        ("pending", 0, 0)
    }  # overload: no failure
    assert all(i.snapshot["history"] for i in items)  # each conversation was saved as its request was built

    jobs = _round(run, api, api.client())
    assert [(j.request_count, j.retries) for j in jobs] == [(5, 5)]  # each sent a second time: a retry
    assert json.loads(api.posted[1]["body"]) == json.loads(
        first["body"]
    )  # rebuilt from them: the same requests
    assert Extraction.objects.filter(run=run).count() == 5


def test_a_batch_filling_for_too_long_is_sent_as_it_is(engagement, monkeypatch):
    docs = [make_contract(engagement, title=f"Supply {n}") for n in range(3)]
    run = start_bulk(
        engagement,
        clause_types=clause_types(["Payment", "Governing Law"]),
        documents=docs,
        engine="anthropic",
        enqueue=False,
    )
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    monkeypatch.setattr("bulk.submit.LOAD_CHUNK", 2)
    jobs = submit_pending(run, client=api.client(), send_after_s=0)
    assert [j.request_count for j in jobs] == [1, 2, 2, 1]
    assert BatchItem.objects.filter(run=run, state="submitted").count() == 6


def _one_ended_batch(engagement, api=None):
    """One contract's five requests submitted as one batch that has ended: (run, client, job)."""
    make_contract(engagement)
    run = _start(engagement)
    client = (api or BatchAPI(FakeClaude(dict(ANSWERS)))).client()
    (job,) = submit_pending(run, client=client)
    poll.refresh(job, client)
    return run, client, job


def test_a_harvest_broken_midway_is_taken_up_again_without_duplicates(engagement):
    run, client, job = _one_ended_batch(engagement)

    def broken():
        for n, line in enumerate(client.messages.batches.results(job.batch_id)):
            if n == 3:
                raise ConnectionError("the connection dropped")
            yield line

    with pytest.raises(ConnectionError):
        harvest(job, results=broken())
    job.refresh_from_db()
    assert job.state == BatchJob.State.ENDED  # handed back to the next poll
    assert Extraction.objects.filter(run=run).count() == 0  # the open group was rolled back

    result = harvest(job, client=client)
    assert result.outcomes == {"stored": 5}
    job.refresh_from_db()
    assert (job.n_harvested, job.n_stored) == (5, 5)
    assert Extraction.objects.filter(run=run).count() == 5


def test_a_harvest_taken_over_stops_and_leaves_the_batch_to_the_harvest_that_took_it(engagement, monkeypatch):
    """A harvest silent for half an hour (a stalled download) is handed to another by the poll. The first
    one used to go on when it woke: applying lines, then marking the batch harvested (or, if its download
    broke, handing the batch back to the poll for a third harvest) while the second held it."""
    from datetime import timedelta

    from django.utils import timezone

    from bulk.harvest import take

    monkeypatch.setattr("bulk.harvest.GROUP_LINES", 2)
    run, client, job = _one_ended_batch(engagement)
    lines = list(client.messages.batches.results(job.batch_id))

    def taken_over():  # the poll's view of a silent harvest, and the harvest it starts
        BatchJob.objects.filter(pk=job.pk).update(harvest_started_at=timezone.now() - timedelta(hours=1))
        assert poll.to_harvest() == [job.pk] and take(job)

    def silent_then_awake():
        yield from lines[:2]
        taken_over()
        yield from lines[2:]

    first = harvest(job, results=silent_then_awake())
    assert first.outcomes == {"stored": 2}  # the group it had applied, nothing after
    job.refresh_from_db()
    assert (job.state, job.n_harvested, job.harvested_at) == ("harvesting", 2, None) and not poll.to_harvest()
    assert first.superseded

    def silent_then_broken():
        yield from lines[:2]  # (all applied already: skipped)
        taken_over()
        raise ConnectionError("the download woke up broken")

    BatchJob.objects.filter(pk=job.pk).update(harvest_started_at=timezone.now() - timedelta(hours=1))
    with pytest.raises(ConnectionError):
        harvest(job, results=silent_then_broken())
    job.refresh_from_db()
    assert job.state == "harvesting" and not job.error and not poll.to_harvest()  # still the newer harvest's

    BatchJob.objects.filter(pk=job.pk).update(harvest_started_at=timezone.now() - timedelta(hours=1))
    assert harvest(job, client=client).outcomes == {"skipped": 2, "stored": 3}  # (its own lease is stale)
    job.refresh_from_db()
    assert (job.state, job.n_harvested, job.n_stored) == ("harvested", 5, 5)
    assert Extraction.objects.filter(run=run).count() == 5


def test_the_succeeded_lines_of_a_document_deleted_mid_run_are_still_counted_in_the_cost_once(engagement):
    """The API bills a succeeded line whose document was deleted while its batch ran; the harvest passed
    over such lines without counting their tokens, and the run's cost came out short."""
    from extraction.usage import Usage, cost_usd

    run, client, job = _one_ended_batch(engagement)
    paid = Usage()
    for line in client.messages.batches.results(job.batch_id):
        paid.add(line.result.message.usage)
    run.tasks.first().document.delete()

    assert harvest(job, client=client).outcomes == {"skipped": 5}
    harvest(job, client=client, force=True)  # met again: counted once
    job.refresh_from_db()
    run.refresh_from_db()
    assert paid.output_tokens and job.output_tokens == run.output_tokens == paid.output_tokens
    assert job.cost_usd == run.cost_usd == cost_usd(paid, run.model, batch=True)


def test_a_results_line_that_is_not_json_loses_only_its_own_request(engagement):
    """A line of the results file that cannot be read used to stop every harvest of the batch at that
    line (the SDK's decoder raises), so the poll took it up again each minute for ever and none of the
    batch's clauses was stored."""
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    run, client, job = _one_ended_batch(engagement, api)
    lines = api._batches[job.batch_id]["lines"]
    garbled, odd = lines[1]["custom_id"], lines[3]["custom_id"]

    def damage(text, download):
        out = text.replace(json.dumps(lines[1]), '{"custom_id": "' + garbled + '", "result": {"type": "succ')
        return out.replace(json.dumps(lines[3]), '{"not": "a result"}')

    api.damage[job.batch_id] = damage
    result = harvest(job, client=client)
    assert result.unreadable == 2 and result.outcomes == {"stored": 3, "requeued": 2}
    job.refresh_from_db()
    assert job.state == BatchJob.State.HARVESTED and (job.n_stored, job.n_requeued) == (3, 2)
    assert "2 lines of the results file could not be read" in job.error
    assert {i.custom_id for i in BatchItem.objects.filter(run=run, state="pending")} == {garbled, odd}
    assert Extraction.objects.filter(run=run).count() == 3

    (job2,) = _round(run, api, client)
    assert job2.request_count == 2
    run.refresh_from_db()
    assert run.status == "done" and Extraction.objects.filter(run=run).count() == 5


def test_a_results_download_cut_mid_line_is_downloaded_again_not_skipped(engagement):
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    run, client, job = _one_ended_batch(engagement, api)
    # the first download stops in the middle of its last line
    api.damage[job.batch_id] = lambda text, download: text[:-40] if download == 1 else text
    with pytest.raises(ValueError, match="cut off"):
        harvest(job, client=client)
    job.refresh_from_db()
    assert job.state == BatchJob.State.ENDED  # handed back to the next poll, which downloads it again
    assert harvest(job, client=client).outcomes == {"stored": 5}
    assert Extraction.objects.filter(run=run).count() == 5


def test_a_harvest_reads_a_documents_chunks_once_not_once_per_stored_clause(engagement):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    run, client, job = _one_ended_batch(engagement)
    with CaptureQueriesContext(connection) as queries:
        result = harvest(job, client=client)
    assert result.outcomes == {"stored": 5}
    chunk_reads = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith("SELECT") and 'FROM "ingest_chunk"' in q["sql"]
    ]
    # the document's chunks once, with its text (not a lookup per citation), and their vectors at most
    # once, for the clause finder's closest sentence of a not_found (not a read per clause)
    texts = [q for q in chunk_reads if '"ingest_chunk"."text"' in q]
    vectors = [q for q in chunk_reads if '"ingest_chunk"."embedding"' in q and q not in texts]
    assert len(texts) == 1 and len(vectors) <= 1 and len(chunk_reads) == len(texts) + len(vectors)
    # every citation still points at the chunk it quotes
    cited = Citation.objects.filter(extraction__run=run).select_related("chunk")
    assert cited.count() == 4
    for citation in cited:
        assert citation.chunk.char_start <= citation.start < citation.end <= citation.chunk.char_end
        assert (
            citation.chunk.text[citation.start - citation.chunk.char_start :][: len(citation.quote)]
            == citation.quote
        )


def test_a_request_with_no_line_in_the_results_file_goes_to_the_next_batch(engagement):
    run, client, job = _one_ended_batch(engagement)
    lines = list(client.messages.batches.results(job.batch_id))
    result = harvest(job, results=lines[1:])
    assert result.missing == 1 and result.outcomes == {"stored": 4, "requeued": 1}
    item = BatchItem.objects.get(custom_id=lines[0].custom_id)
    assert (item.state, item.last_result, item.failures_in_row) == ("pending", "errored", 1)
    assert "no line for this request" in item.error
    job.refresh_from_db()
    assert (job.state, job.n_harvested, job.n_stored, job.n_requeued) == ("harvested", 5, 4, 1)


def test_a_batch_whose_submitter_stopped_after_the_api_took_it_is_followed(engagement):
    make_contract(engagement)
    run = _start(engagement)
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    (job,) = submit_pending(run, client=api.client())
    # as if the process had died between saving the batch id and moving the job on
    BatchJob.objects.filter(pk=job.pk).update(state=BatchJob.State.SUBMITTING)

    poll.poll_active(client=api.client())

    job.refresh_from_db()
    assert job.state in (BatchJob.State.IN_PROGRESS, BatchJob.State.ENDED)


def test_a_batch_taken_after_its_job_was_given_up_as_lost_is_canceled_not_billed_twice(engagement):
    """A submitter whose POST returned after the poll had marked its job lost used to save the batch id on
    the lost job: the batch ran, unfollowed, while its requests were sent again in another batch."""
    from datetime import timedelta

    from django.utils import timezone

    make_contract(engagement)
    run = _start(engagement)
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    create = api._batch_create

    def slow_create(body):  # the upload took longer than the poll waits for a batch id
        assert poll.recover_stale(now=timezone.now() + timedelta(hours=1))["jobs_lost"] == 1
        return create(body)

    api._batch_create = slow_create
    (job,) = submit_pending(run, client=api.client())
    api._batch_create = create
    (created,) = api.created
    assert job.state == BatchJob.State.LOST and job.batch_id == created["id"]
    assert api._batches[created["id"]]["cancel"] is True
    assert "given up as lost" in job.error and "canceled" in job.error
    assert set(BatchItem.objects.filter(run=run).values_list("state", flat=True)) == {"pending"}

    (again,) = _round(run, api, api.client())
    assert again.request_count == 5 and len(api.created) == 2
    assert poll.poll_active(client=api.client()).polled == 0  # the lost one is not followed
    run.refresh_from_db()
    assert run.status == "done" and Extraction.objects.filter(run=run).count() == 5


def _answer_lost(api, *, taken=True):
    """The next batch creation gets no answer (the client times out); ``taken``: the API took it all the same."""
    create = api._batch_create

    def lost(body):
        api._batch_create = create  # the next one is answered
        if taken:
            create(body)
        raise httpx2.ReadTimeout("no answer to the batch creation")

    api._batch_create = lost


def test_a_creation_that_got_no_answer_follows_the_batch_the_api_took_instead_of_a_second_one(engagement):
    """The SDK used to send a batch creation that timed out again: the API, which had taken the first,
    took a second, and the night's requests ran and were billed twice."""
    make_contract(engagement)
    run = _start(engagement)
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    _answer_lost(api)
    client = api.client()
    (job,) = submit_pending(run, client=client)
    (created,) = api.created
    assert job.batch_id == created["id"] and job.state == BatchJob.State.IN_PROGRESS and not job.error
    assert set(BatchItem.objects.filter(run=run).values_list("state", "job")) == {("submitted", job.pk)}

    poll.refresh(job, client)
    assert harvest(job, client=client).outcomes == {"stored": 5}
    run.refresh_from_db()
    assert run.status == "done" and Extraction.objects.filter(run=run).count() == 5 and len(api.created) == 1


def test_a_creation_that_got_no_answer_takes_no_batch_that_may_be_another_ones(engagement, monkeypatch):
    """Neither a batch a run here follows, nor one of two that could be it: the requests are sent again and
    the run page says which batches to look for in the Console."""
    monkeypatch.setattr("bulk.adopt.LIST_PAGE", 1)  # the list read page by page
    first, second = (make_contract(engagement, title=f"Supply {n}") for n in range(2))
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    ours = _start(engagement, documents=[first])
    (followed,) = submit_pending(ours, client=api.client())  # as many requests, and followed here
    run = _start(engagement, documents=[second])

    _answer_lost(api, taken=False)  # the API took nothing: the requests wait for the next poll
    (job,) = submit_pending(run, client=api.client())
    assert job.state == BatchJob.State.FAILED and job.batch_id == "" and "Console" not in job.error
    assert [c["id"] for c in api.created] == [followed.batch_id]

    # someone else's batch of five, then ours that got no answer: either could be this job's
    api.client().messages.batches.create(
        requests=[
            {
                "custom_id": f"other-{n}",
                "params": {
                    "model": "claude-sonnet-4-6",
                    "max_tokens": 10,
                    "messages": [{"role": "user", "content": "hi"}],
                },
            }
            for n in range(5)
        ]
    )
    _answer_lost(api)
    (job,) = submit_pending(run, client=api.client())
    other, lost = (c["id"] for c in api.created[1:])
    assert job.state == BatchJob.State.FAILED and job.batch_id == ""
    assert other in job.error and lost in job.error and "cancel it in the Claude Console" in job.error
    assert set(BatchItem.objects.filter(run=run).values_list("state", flat=True)) == {"pending"}


def test_without_an_api_key_nothing_is_claimed(engagement, settings):
    from extraction.outcome import EngineError

    make_contract(engagement)
    run = _start(engagement)
    settings.ANTHROPIC_API_KEY = ""
    with pytest.raises(EngineError, match="ANTHROPIC_API_KEY is not set"):
        submit_pending(run)
    assert set(BatchItem.objects.filter(run=run).values_list("state", flat=True)) == {BatchItem.State.PENDING}


def test_a_run_whose_last_waiting_requests_were_deleted_after_the_last_harvest_is_ended_by_the_poll(
    engagement,
):
    """A document deleted while its requests waited for a retry batch, everything else harvested: nothing was
    left to send, follow or harvest, so nothing refreshed the run, which said "running" (polled) for ever."""
    first, second = (make_contract(engagement, title=f"Supply {n}") for n in range(2))
    run = _start(engagement, names=["Payment", "Governing Law"])
    api = BatchAPI(FakeClaude(dict(ANSWERS)))
    client = api.client()
    api.plan[_cid(run, second, "Payment")] = ["errored"]
    _round(run, api, client)
    run.refresh_from_db()
    assert run.status == "running" and BatchItem.objects.filter(run=run, state="pending").count() == 1

    second.delete()  # by an admin, while its request waits for the next batch
    out = poll.poll_active(client=client)
    run.refresh_from_db()
    assert (run.status, run.error) == ("done", "") and run.finished_at is not None
    assert out.settled == [run.pk] and out.submit == []
    assert Extraction.objects.filter(run=run).count() == 2
    assert poll.poll_active(client=client).settled == []  # a finished run is left alone


def test_the_poll_leaves_alone_a_run_with_requests_still_waiting_or_in_flight(engagement):
    make_contract(engagement)
    run = _start(engagement, names=["Payment"])
    api = BatchAPI(FakeClaude(dict(ANSWERS)), polls_to_end=2)
    assert poll.poll_active(client=api.client()).settled == []  # pending: the poll submits it
    submit_pending(run, client=api.client())
    assert poll.poll_active(client=api.client()).settled == []  # in flight
    run.refresh_from_db()
    assert run.status == "running"
