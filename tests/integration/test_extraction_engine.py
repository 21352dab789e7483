"""The Claude engine through the real ``anthropic`` client over a mock transport playing the API's
response shapes: tool use, not_found, verification retry, every stop_reason, retried errors,
checkpoint/resume after max_tokens, compaction over 50 turns, prompt caching and usage."""

from __future__ import annotations

import json
import re

import pytest

from extraction import checkpoints, launch, pipeline, run_status
from extraction.agent.case_facts import parse_case_facts, render_case_facts
from extraction.agent.compaction import estimate_tokens
from extraction.agent.engine import AnthropicEngine
from extraction.agent.tool_schemas import ANSWER_TOOLS, all_tools, answer_of, validate_extract_clause
from extraction.catalog.sync import catalog_order
from extraction.models import Checkpoint, Citation, ClauseTask, Extraction, ExtractionRun
from tests.integration.extraction_fixtures import ANSWERS, PAGE_OF, TYPES, clause_types, make_contract
from tests.mock_anthropic import FakeClaude, MockAnthropic, extract_call, message, text_block, tool_use_block

pytestmark = pytest.mark.django_db


def _run(engagement, document, names=TYPES):
    return launch.create_run(
        engagement, documents=[document], clause_types=clause_types(names), engine="anthropic", enqueue=False
    )


def _engine(api, **kw):
    kw.setdefault("max_turns", 4)
    return AnthropicEngine(
        client=api.client(max_retries=kw.pop("max_retries", 3)), model="claude-sonnet-4-6", **kw
    )


def _results(run):
    """Comparable picture of a run's extractions."""
    out = {}
    for ex in Extraction.objects.filter(run=run).select_related("clause_type").prefetch_related("citations"):
        out[ex.clause_type.name] = (
            ex.status,
            ex.clause_text,
            tuple((c.page, c.start, c.end, c.quote) for c in ex.citations.all()),
        )
    return out


def _system_facts(body) -> dict:
    facts_block = next(b["text"] for b in body["system"] if "<case_facts" in b["text"])
    return parse_case_facts(facts_block)


# --------------------------------------------------------------------------- schema


def test_no_extraction_tool_schema_lets_a_found_clause_through_without_citation():
    import jsonschema

    found = {"clause_id": "1:payment", "clause_type": "Payment", "clause_text": "pay $5", "citations": []}
    not_found = {"clause_id": "1:payment", "clause_type": "Payment"}  # report_not_found's input
    cited = dict(found, citations=[{"chunk_id": "c1", "page": 1, "quote": "pay $5"}])
    tools = {t["name"]: t["input_schema"] for t in all_tools(["payment"]) if t["name"] in ANSWER_TOOLS}
    assert set(tools) == {"extract_clause", "report_not_found"}
    for name, schema in tools.items():
        validator = jsonschema.Draft202012Validator(schema)
        assert list(validator.iter_errors(found)), f"{name} let a found clause through without citation"
        assert answer_of(name, found)[1]
    assert not list(jsonschema.Draft202012Validator(tools["extract_clause"]).iter_errors(cited))
    assert not list(jsonschema.Draft202012Validator(tools["report_not_found"]).iter_errors(not_found))
    assert validate_extract_clause(found)
    assert not validate_extract_clause(cited)


# --------------------------------------------------------------------------- normal use


def test_tool_use_extraction_is_verified_cited_and_costed(engagement):
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    run = _run(engagement, document)
    assert pipeline.process_document(run.pk, document.pk, engine=_engine(api)) == "done"

    run.refresh_from_db()
    assert run.status == "done" and run.finished_at
    assert set(ClauseTask.objects.filter(run=run).values_list("status", flat=True)) == {"done"}
    payment = Extraction.objects.get(run=run, clause_type__name="Payment")
    assert (
        payment.status == "found" and payment.engine == "anthropic" and payment.model == "claude-sonnet-4-6"
    )
    assert payment.clause_text == ANSWERS["Payment"]
    (cit,) = payment.citations.all()
    assert document.text[cit.start : cit.end] == cit.quote == ANSWERS["Payment"]
    assert cit.page == PAGE_OF["Payment"] and cit.chunk.document_id == document.pk
    assert payment.dedupe_key == cit.chunk.chunk_id
    for name in ("Non-Compete", "Insurance"):
        ex = Extraction.objects.get(run=run, clause_type__name=name)
        assert ex.status == "not_found" and not ex.citations.exists() and ex.dedupe_key == "not_found"

    first = api.requests[0]
    assert first["tool_choice"] == {"type": "any"}
    assert [t["name"] for t in first["tools"]][-2:] == ["extract_clause", "report_not_found"]
    assert api.refusals == []  # every request was one the API takes
    assert first["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in b for b in first["system"][1:])
    facts = _system_facts(first)
    assert facts["policy_cap"] == "$247.83" and facts["doc_id"] == str(document.pk)
    assert "[turn note]" in first["system"][-1]["text"]
    # whole document (< 12,000 chars) with provenance tags, in the first question
    question = first["messages"][0]["content"][0]["text"]
    assert "=== §" in question and "chunk:" in question and "p.3" in question
    # CASE_FACTS count what is recorded, rebuilt every turn
    last = _system_facts(api.requests[-1])
    assert last["extracted_count"] == 5 and len(last["decisions"]) == len(TYPES) - 1

    # usage and prompt caching: written once, read after
    assert run.input_tokens > 0 and run.output_tokens > 0
    assert run.cache_write_tokens > 0 and run.cache_read_tokens > 0
    assert run.cost_usd > 0
    cp = Checkpoint.objects.get(run=run, document=document)
    assert (
        cp.last_record["clause_type"] == sorted(TYPES, key=catalog_order)[-1]
        and cp.case_facts["policy_cap"] == "$247.83"
    )


def test_not_found_answer(engagement):
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude({}))
    run = _run(engagement, document, ["Governing Law"])
    pipeline.process_document(run.pk, document.pk, engine=_engine(api))
    ex = Extraction.objects.get(run=run)
    assert (ex.status, ex.clause_text, ex.citations.count()) == ("not_found", "", 0)
    # Claude names no sentence: the clause finder's best is kept as the closest, located in the source
    near = ex.closest
    assert ANSWERS["Governing Law"] in near["quote"] and near["page"] == PAGE_OF["Governing Law"]
    assert document.text[near["start"] : near["end"]] == near["quote"]


def test_quote_not_in_cited_chunk_gets_one_retry_then_verified(engagement):
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS), wrong_quote={"Cap On Liability": 1}))
    run = _run(engagement, document, ["Cap On Liability"])
    pipeline.process_document(run.pk, document.pk, engine=_engine(api))
    ex = Extraction.objects.get(run=run)
    assert ex.status == "found" and ex.clause_text == ANSWERS["Cap On Liability"]
    retry = api.requests[1]
    result = retry["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert "not found in chunk" in result["content"]
    assert retry["tool_choice"] == {"type": "any"} and "Answer now" in retry["system"][-1]["text"]


def test_quote_not_in_cited_chunk_twice_is_stored_unverified_and_flagged(engagement):
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS), wrong_quote={"Cap On Liability": 2}))
    run = _run(engagement, document, ["Cap On Liability"])
    pipeline.process_document(run.pk, document.pk, engine=_engine(api))
    ex = Extraction.objects.get(run=run)
    assert ex.status == "unverified" and ex.dedupe_key == "unverified"
    assert ex.clause_text.startswith("The parties agree to a cap of about $250")
    assert any("attempt 1" in e and "not found in chunk" in e for e in ex.verification_errors)
    assert any("attempt 2" in e for e in ex.verification_errors)
    assert not ex.citations.exists()  # nothing unverified is ever stored as a citation
    assert len(api.requests) == 2  # exactly one retry
    assert ClauseTask.objects.get(run=run).status == "done"


def test_a_retry_that_fails_differently_is_stored_unverified_with_both_reasons_on_its_review_page(
    engagement, make_member, client
):
    import html as html_lib

    from django.urls import reverse

    document = make_contract(engagement)
    chunk = next(c for c in document.chunks.all() if ANSWERS["Payment"] in c.text)
    cid = f"{document.pk}:payment"
    wrong_quote = {"chunk_id": chunk.chunk_id, "page": 2, "quote": "pay Supplier about $250 per pallet"}
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.extend(
        [  # 1: a quote not in the chunk; 2: the right quote, but a value the model rounded
            extract_call(cid, "Payment", "Customer shall pay Supplier about $250 per pallet", [wrong_quote]),
            extract_call(
                cid,
                "Payment",
                "Customer shall pay Supplier a unit fee of $250 per pallet",
                [{"chunk_id": chunk.chunk_id, "page": 2, "quote": ANSWERS["Payment"]}],
            ),
        ]
    )
    run = _run(engagement, document, ["Payment"])
    pipeline.process_document(run.pk, document.pk, engine=_engine(api))

    ex = Extraction.objects.get(run=run)
    assert ex.status == "unverified" and ex.citations.count() == 1  # its quote was found; its text was not
    retry = api.requests[1]["messages"][-1]["content"][0]["content"]
    assert "not found in chunk" in retry and "one retry" in retry  # the retry names the error
    first = next(e for e in ex.verification_errors if e.startswith("attempt 1:"))
    second = next(e for e in ex.verification_errors if e.startswith("attempt 2:") and '"$250"' in e)

    client.force_login(make_member(engagement, "auditor"))
    cit = ex.citations.get()
    for url, headers in (
        (reverse("clause", args=[document.pk, ex.pk]), {"HTTP_HX_REQUEST": "true"}),
        (reverse("clause", args=[document.pk, ex.pk]), {}),
        (reverse("citation", args=[document.pk, ex.pk, cit.pk]), {"HTTP_HX_REQUEST": "true"}),
    ):
        page = html_lib.unescape(client.get(url, **headers).content.decode())
        assert "<mark" in page  # the cited quote is shown ...
        assert first in page and second in page  # ... and why the clause is flagged, both attempts


def test_a_reply_with_two_rejected_extract_calls_is_one_attempt_and_gets_its_retry(engagement):
    # One reply is one attempt, however many extract_clause calls it holds: both errors go back, one
    # tool_result per tool_use id (the API refuses a reply that leaves one unanswered), and the clause
    # keeps its one retry instead of being stored unverified after a single turn.
    document = make_contract(engagement)
    chunk = next(c for c in document.chunks.all() if ANSWERS["Payment"] in c.text)
    cid = f"{document.pk}:payment"
    wrong = "Customer shall pay Supplier about $250 per pallet"
    calls = [
        tool_use_block(
            "extract_clause",
            {
                "clause_id": cid,
                "clause_type": "Payment",
                "clause_text": wrong,
                "citations": [{"chunk_id": chunk.chunk_id, "page": 2, "quote": wrong}],
            },
        ),
        tool_use_block(
            "extract_clause",
            {
                "clause_id": cid,
                "clause_type": "Payment",
                "clause_text": ANSWERS["Payment"],
                "citations": [{"chunk_id": "c-no-such-chunk", "page": 2, "quote": ANSWERS["Payment"]}],
            },
        ),
    ]
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.extend([message([text_block("Two readings."), *calls], "tool_use"), None])
    run = _run(engagement, document, ["Payment"])
    pipeline.process_document(run.pk, document.pk, engine=_engine(api))

    ex = Extraction.objects.get(run=run)
    assert ex.status == "found" and ex.clause_text == ANSWERS["Payment"]
    assert len(api.requests) == 2
    retry = api.requests[1]
    results = [b for b in retry["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert [r["tool_use_id"] for r in results] == [c["id"] for c in calls]
    assert all(r["is_error"] and "one retry" in r["content"] for r in results)
    assert "not found in chunk" in results[0]["content"] and "c-no-such-chunk" in results[1]["content"]
    assert retry["tool_choice"] == {"type": "any"} and "Answer now" in retry["system"][-1]["text"]


def test_two_rejected_replies_of_two_calls_store_every_reason(engagement):
    document = make_contract(engagement)
    chunk = next(c for c in document.chunks.all() if ANSWERS["Payment"] in c.text)
    cid = f"{document.pk}:payment"

    def two_bad_calls(body):
        return message(
            [
                tool_use_block(
                    "extract_clause",
                    {
                        "clause_id": cid,
                        "clause_type": "Payment",
                        "clause_text": quote,
                        "citations": [{"chunk_id": chunk_id, "page": 2, "quote": quote}],
                    },
                )
                for chunk_id, quote in (
                    (chunk.chunk_id, "Customer pays about $250"),
                    ("c-no-such-chunk", ANSWERS["Payment"]),
                )
            ],
            "tool_use",
        )

    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.extend([two_bad_calls, two_bad_calls])
    run = _run(engagement, document, ["Payment"])
    pipeline.process_document(run.pk, document.pk, engine=_engine(api))

    ex = Extraction.objects.get(run=run)
    assert ex.status == "unverified" and len(api.requests) == 2
    for attempt in (1, 2):
        mine = [e for e in ex.verification_errors if e.startswith(f"attempt {attempt}")]
        assert any("not found in chunk" in e for e in mine) and any("c-no-such-chunk" in e for e in mine)


def test_paraphrased_value_is_rejected(engagement):
    document = make_contract(engagement)
    quote = ANSWERS["Payment"]

    def paraphrase(body):
        from tests.mock_anthropic import cite, current_question

        cid, ctype = current_question(body)
        return extract_call(cid, ctype, "Customer pays about $250 per pallet.", [cite(body, quote)])

    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.extend([paraphrase, None])
    run = _run(engagement, document, ["Payment"])
    pipeline.process_document(run.pk, document.pk, engine=_engine(api))
    ex = Extraction.objects.get(run=run)
    assert ex.status == "found" and ex.clause_text == quote
    assert '"$250"' in api.requests[1]["messages"][-1]["content"][0]["content"]


def test_an_extract_clause_input_that_arrives_as_a_string_is_read_not_crashed_on(engagement):
    # The SDK can hand back a tool_use input as a string (the model's JSON; anthropic-sdk-python#804), and
    # the API refuses it when sent back in the history ("tool_use.input: Input should be a valid dictionary").
    document = make_contract(engagement)
    chunk = next(c for c in document.chunks.all() if ANSWERS["Payment"] in c.text)
    answer = {
        "clause_id": f"{document.pk}:payment",
        "clause_type": "Payment",
        "clause_text": ANSWERS["Payment"],
        "citations": [{"chunk_id": chunk.chunk_id, "page": 2, "quote": ANSWERS["Payment"]}],
    }
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.extend(
        [
            message([tool_use_block("extract_clause", "{'clause_text': ")], "tool_use"),  # malformed
            message([tool_use_block("extract_clause", json.dumps(answer))], "tool_use"),
        ]
    )
    run = _run(engagement, document, ["Payment", "Governing Law"])
    assert pipeline.process_document(run.pk, document.pk, engine=_engine(api)) == "done"

    assert set(ClauseTask.objects.filter(run=run).values_list("status", flat=True)) == {"done"}
    payment = Extraction.objects.get(run=run, clause_type__name="Payment")
    assert (
        payment.status == "found"
        and payment.clause_text == ANSWERS["Payment"]
        and payment.citations.count() == 1
    )
    feedback = api.requests[1]["messages"][-1]["content"][0]
    assert feedback["is_error"] and "missing field 'citations'" in feedback["content"]
    sent_back = [
        b
        for r in api.requests
        for m in r["messages"]
        if m["role"] == "assistant"
        for b in m["content"]
        if b.get("type") == "tool_use"
    ]
    assert sent_back and all(isinstance(b["input"], dict) for b in sent_back)
    run.refresh_from_db()
    assert run.input_tokens > 0 and run.status == "done"


def test_citations_sent_as_a_json_string_are_read_and_verified(engagement):
    document = make_contract(engagement)
    chunk = next(c for c in document.chunks.all() if ANSWERS["Payment"] in c.text)
    citations = json.dumps([{"chunk_id": chunk.chunk_id, "page": 2, "quote": ANSWERS["Payment"]}])
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.append(
        message(
            [
                tool_use_block(
                    "extract_clause",
                    {
                        "clause_id": f"{document.pk}:payment",
                        "clause_type": "Payment",
                        "clause_text": ANSWERS["Payment"],
                        "citations": citations,
                    },
                )
            ],
            "tool_use",
        )
    )
    run = _run(engagement, document, ["Payment"])
    pipeline.process_document(run.pk, document.pk, engine=_engine(api))

    ex = Extraction.objects.get(run=run)
    assert ex.status == "found" and not ex.verification_errors and len(api.requests) == 1
    (cit,) = ex.citations.all()
    assert document.text[cit.start : cit.end] == ANSWERS["Payment"] and cit.page == 2


@pytest.mark.parametrize(
    "paraphrase",
    [
        "Customer shall pay Supplier a unit fee of 247.83 dollars per pallet",
        "Customer shall pay Supplier a unit fee of 247.83 per pallet",
    ],
)
def test_an_amount_written_without_its_currency_sign_is_never_stored_as_verified(engagement, paraphrase):
    document = make_contract(engagement)
    chunk = next(c for c in document.chunks.all() if ANSWERS["Payment"] in c.text)
    answer = extract_call(
        f"{document.pk}:payment",
        "Payment",
        paraphrase,
        [{"chunk_id": chunk.chunk_id, "page": 2, "quote": ANSWERS["Payment"]}],
    )
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.extend([answer, answer])
    run = _run(engagement, document, ["Payment"])
    pipeline.process_document(run.pk, document.pk, engine=_engine(api))

    ex = Extraction.objects.get(run=run)
    assert ex.status == "unverified" and ex.clause_text == paraphrase
    assert (
        '"$247.83"' in api.requests[1]["messages"][-1]["content"][0]["content"]
    )  # the retry names the source's
    assert any("attempt 2" in e and "247.83" in e and "verbatim" in e for e in ex.verification_errors)


# --------------------------------------------------------------------------- errors and stop reasons


@pytest.mark.parametrize("error", ["overloaded", "rate_limited", "server_error"])
def test_retryable_http_error_then_success(engagement, error):
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.append(getattr(api, error)())
    run = _run(engagement, document, ["Governing Law"])
    pipeline.process_document(run.pk, document.pk, engine=_engine(api, max_retries=2))
    ex = Extraction.objects.get(run=run)
    assert ex.status == "found"
    assert len(api.requests) == 2 and api.requests[0] == api.requests[1]


def test_529_past_the_retry_budget_leaves_the_clause_open_for_a_later_try(engagement):
    from extraction.outcome import TransientEngineError

    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.extend([api.overloaded()] * 3)
    run = _run(engagement, document, ["Governing Law", "Payment"])
    with pytest.raises(TransientEngineError) as raised:  # the task waits it out (test_extraction_task)
        pipeline.process_document(run.pk, document.pk, engine=_engine(api, max_retries=2), resume_later=True)
    assert "529" in str(raised.value) and "overloaded_error" in str(raised.value)
    assert "request-id req_" in str(raised.value)
    assert not ClauseTask.objects.filter(run=run, status="failed").exists()  # nothing given up on
    assert pipeline.process_document(run.pk, document.pk, engine=_engine(api, max_retries=2)) == pipeline.DONE
    assert set(ClauseTask.objects.filter(run=run).values_list("status", flat=True)) == {"done"}
    run.refresh_from_db()
    assert run.status == "done"


def test_529_past_the_retry_budget_outside_a_task_fails_the_open_clauses_in_words(engagement):
    # extract --wait, evaluate, benchmark runs: nothing would try again later, and each next clause
    # would wait out the SDK's retries again
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.extend([api.overloaded()] * 3)
    run = _run(engagement, document, ["Governing Law", "Payment"])
    assert pipeline.process_document(run.pk, document.pk, engine=_engine(api, max_retries=2)) == pipeline.DONE
    tasks = ClauseTask.objects.filter(run=run)
    assert set(tasks.values_list("status", flat=True)) == {"failed"} and len(api.requests) == 3  # asked once
    asked, skipped = sorted(tasks.values_list("error", flat=True))  # "Anthropic..." < "not tried..."
    assert "529" in asked and "overloaded_error" in asked and "request-id req_" in asked
    assert asked.endswith("try again in a few minutes") and skipped == f"not tried: {asked}"
    run.refresh_from_db()
    assert run.status == "failed" and "2 of 2 clause tasks failed" in run.error


def test_a_time_limit_inside_the_http_wait_reaches_the_task(engagement):
    from celery.exceptions import SoftTimeLimitExceeded

    def cut(body):
        raise SoftTimeLimitExceeded()

    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.append(cut)
    run = _run(engagement, document, ["Governing Law"])
    with pytest.raises(SoftTimeLimitExceeded):  # not "Anthropic API unreachable: Connection error."
        pipeline.process_document(run.pk, document.pk, engine=_engine(api, max_retries=0))
    assert ClauseTask.objects.get(run=run).status == "running"  # left open: the task resumes it


def test_a_bad_tool_argument_goes_back_to_the_model(engagement):
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    chunk_id = document.chunks.order_by("ordinal").first().chunk_id
    api.script.extend(
        [
            None,
            message(
                [
                    tool_use_block("read_chunk", {"chunk_id": chunk_id, "neighbours": "two"}),
                    tool_use_block("search_document", {"query": "governing law", "k": "all"}),
                ],
                "tool_use",
            ),
        ]
    )  # after the document-type question
    run = _run(engagement, document, ["Governing Law", "Payment"])
    pipeline.process_document(run.pk, document.pk, engine=_engine(api))
    assert set(ClauseTask.objects.filter(run=run).values_list("status", flat=True)) == {"done"}
    results = [
        b
        for r in api.requests
        for m in r["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result" and "bad arguments" in str(b.get("content"))
    ]
    assert len(results) == 2 and all(r.get("is_error") and "bad arguments" in r["content"] for r in results)


def test_bad_request_is_not_retried(engagement):
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.append(api.invalid_request("messages: text content blocks must be non-empty"))
    run = _run(engagement, document, ["Governing Law"])
    pipeline.process_document(run.pk, document.pk, engine=_engine(api, max_retries=3))
    task = ClauseTask.objects.get(run=run)
    assert task.status == "failed" and "400 invalid_request_error" in task.error
    assert len(api.requests) == 1


def test_refusal_fails_the_clause_and_the_next_one_still_runs(engagement):
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.append(message([], "refusal"))
    run = _run(engagement, document, ["Governing Law", "Payment"])
    pipeline.process_document(run.pk, document.pk, engine=_engine(api))
    statuses = dict(ClauseTask.objects.filter(run=run).values_list("clause_type__name", "status"))
    assert statuses == {"Payment": "failed", "Governing Law": "done"}  # Payment comes first in the catalog
    assert "declined" in ClauseTask.objects.get(run=run, clause_type__name="Payment").error
    asked = json.dumps(api.requests[1]["messages"])  # the refused question is not asked again with the next
    assert "find the Governing Law clause" in asked and "find the Payment clause" not in asked


def test_pause_turn_is_sent_back_and_continued(engagement):
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.append(message([text_block("Looking through the governing law section...")], "pause_turn"))
    run = _run(engagement, document, ["Governing Law"])
    pipeline.process_document(run.pk, document.pk, engine=_engine(api))
    assert Extraction.objects.get(run=run).status == "found"
    assert api.requests[1]["messages"][-1]["role"] == "assistant"  # the paused turn, sent back as is


def test_end_turn_without_tool_gets_one_nudge_then_forced_tool(engagement):
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.append(message([text_block("The governing law is Delaware.")], "end_turn"))
    run = _run(engagement, document, ["Governing Law"])
    pipeline.process_document(run.pk, document.pk, engine=_engine(api))
    assert Extraction.objects.get(run=run).status == "found"
    nudged = api.requests[1]
    assert nudged["tool_choice"] == {"type": "any"} and "Answer now" in nudged["system"][-1]["text"]
    assert "report_not_found" in nudged["messages"][-1]["content"][-1]["text"]


def test_context_window_exceeded_compacts_and_retries(engagement):
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    run = _run(engagement, document, ["Governing Law", "Payment", "Cap On Liability"])
    api.script.extend([None, None, message([], "model_context_window_exceeded")])
    pipeline.process_document(run.pk, document.pk, engine=_engine(api))
    assert Extraction.objects.filter(run=run, status="found").count() == 3
    cp = Checkpoint.objects.get(run=run, document=document)
    assert cp.position["history_files"], "compacted history is kept as a readable file"
    assert "[compacted history]" in json.dumps(api.requests[3]["messages"])


# --------------------------------------------------------------------------- checkpoint and resume


def test_max_tokens_mid_run_checkpoints_and_a_fresh_session_finishes_like_an_uninterrupted_run(engagement):
    document = make_contract(engagement)
    reference = _run(engagement, document)
    pipeline.process_document(
        reference.pk, document.pk, engine=_engine(MockAnthropic(FakeClaude(dict(ANSWERS))))
    )

    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    truncated = message(
        [text_block("The clause reads: "), tool_use_block("extract_clause", {"clause_id": "x"})], "max_tokens"
    )
    api.script.extend([None, None, truncated])
    run = _run(engagement, document)
    assert (
        pipeline.process_document(run.pk, document.pk, engine=_engine(api, max_tokens=1024)) == "interrupted"
    )

    cp = Checkpoint.objects.get(run=run, document=document)
    second, third = sorted(TYPES, key=catalog_order)[1:3]
    assert cp.last_record["interrupted"] == "max_tokens"  # and the last clause's record is kept
    assert cp.last_record["clause_type"] == second
    assert cp.last_record["status"] == ("found" if ANSWERS[second] else "not_found")
    assert cp.last_record["extraction_id"] == Extraction.objects.get(run=run, clause_type__name=second).pk
    assert cp.position["current"]["clause_type"] == third and cp.position["max_tokens"] == 2048
    assert cp.case_facts["extracted_count"] == 2 and cp.case_facts["policy_cap"] == "$247.83"
    assert Extraction.objects.filter(run=run).count() == 2
    assert ClauseTask.objects.get(run=run, clause_type__name=third).status == "running"

    # a fresh session: new engine, new client, only what the database holds
    api2 = MockAnthropic(FakeClaude(dict(ANSWERS)))
    assert pipeline.process_document(run.pk, document.pk, engine=_engine(api2, max_tokens=1024)) == "done"
    assert api2.requests[0]["max_tokens"] == 2048
    assert api2.requests[0]["messages"] == cp.history  # resumed from the checkpoint, question not repeated
    assert _results(run) == _results(reference)
    assert Extraction.objects.filter(run=run).count() == len(TYPES)
    assert Citation.objects.filter(extraction__run=run).count() == 5

    # running it again changes nothing (idempotent)
    pipeline.process_document(run.pk, document.pk, engine=_engine(MockAnthropic(FakeClaude(dict(ANSWERS)))))
    assert Extraction.objects.filter(run=run).count() == len(TYPES)
    run.refresh_from_db()
    assert run.status == "done"


def test_a_clause_that_kept_losing_its_worker_is_failed_and_the_others_finish(engagement):
    document = make_contract(engagement)
    run = _run(engagement, document, ["Governing Law", "Payment"])
    ClauseTask.objects.filter(run=run, clause_type__name="Payment").update(
        status="running", attempts=pipeline.MAX_ATTEMPTS
    )

    assert (
        pipeline.process_document(
            run.pk, document.pk, engine=_engine(MockAnthropic(FakeClaude(dict(ANSWERS))))
        )
        == "done"
    )

    poison = ClauseTask.objects.get(run=run, clause_type__name="Payment")
    assert poison.status == "failed" and "started 5 times without finishing" in poison.error
    assert poison.attempts == pipeline.MAX_ATTEMPTS  # not started again
    assert ClauseTask.objects.get(run=run, clause_type__name="Governing Law").status == "done"
    assert list(Extraction.objects.filter(run=run).values_list("clause_type__name", flat=True)) == [
        "Governing Law"
    ]


def test_the_agent_loads_a_clause_types_guide_when_it_needs_it(engagement):
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS), skill_first={"Governing Law"}))
    run = _run(engagement, document, ["Governing Law"])

    assert pipeline.process_document(run.pk, document.pk, engine=_engine(api)) == "done"

    first, second = api.requests[0], api.requests[1]
    assert 'Load the skill "governing-law" first' in first["messages"][0]["content"][0]["text"]
    system = "\n".join(b["text"] for b in first["system"])
    assert "governing-law" in system and "## What it is" not in system  # names and descriptions only
    result = second["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and not result.get("is_error")
    assert "# Governing Law" in json.dumps(result["content"]) and "## What it is" in json.dumps(
        result["content"]
    )
    assert Extraction.objects.get(run=run).status == "found"


def test_persisting_the_same_outcome_twice_creates_no_duplicate(engagement):
    from extraction.docview import load_document
    from extraction.outcome import ClauseOutcome
    from extraction.persist import save_outcome
    from extraction.verify import verify_extraction

    document = make_contract(engagement)
    run = _run(engagement, document, ["Governing Law"])
    view = load_document(document)
    quote = ANSWERS["Governing Law"]
    chunk = next(c for c in view.chunks if quote in c.text)
    data = {
        "clause_id": "x",
        "clause_type": "Governing Law",
        "clause_text": quote,
        "citations": [{"chunk_id": chunk.chunk_id, "page": 9, "quote": quote}],
    }
    result = verify_extraction(data["citations"], view.by_id, view.pages, quote, document_text=view.text)
    outcome = ClauseOutcome("Governing Law", "x", "found", data, result)
    ct = clause_types(["Governing Law"])[0]
    a = save_outcome(run, document, ct, outcome, engine="anthropic")
    b = save_outcome(run, document, ct, outcome, engine="anthropic")
    assert a.pk == b.pk and Citation.objects.filter(extraction=a).count() == 1
    cit = a.citations.get()
    assert cit.page == 3 and cit.model_page == 9  # the server's page, the model's kept for audit


def test_policy_facts_that_are_not_an_object_are_refused_in_the_admin_and_do_not_stop_a_run(engagement):
    from django.core.exceptions import ValidationError

    engagement.policy_facts = "$247.83"  # valid JSON in the admin's box, but not {"policy_cap": "$247.83"}
    with pytest.raises(ValidationError) as refused:
        engagement.full_clean()
    assert 'JSON object, e.g. {"policy_cap": "$247.83"}' in str(refused.value)
    engagement.save()  # a row saved so before this check
    document = make_contract(engagement)
    run = _run(engagement, document, ["Governing Law"])

    assert (
        pipeline.process_document(
            run.pk, document.pk, engine=_engine(MockAnthropic(FakeClaude(dict(ANSWERS))))
        )
        == "done"
    )
    assert ClauseTask.objects.get(run=run).status == "done"
    assert checkpoints.facts_for(run, document).policy_cap is None


def test_policy_facts_with_a_decimal_number_are_refused_so_the_amount_is_typed_as_text(engagement):
    # the admin's JSON box reads 250000.00 as the float 250000.0 before any code of ours sees it: CASE_FACTS
    # pinned "250000.0", an amount the contract never wrote
    from django.core.exceptions import ValidationError

    for facts, key in (
        ({"policy_cap": 250000.00}, "policy_cap"),
        ({"limits": {"per_claim": 1.5e6}}, "per_claim"),
        ({"caps": ["$1", 2.50]}, "caps"),
    ):
        engagement.policy_facts = facts
        with pytest.raises(ValidationError) as refused:
            engagement.full_clean()
        assert f"{key} is a decimal number" in str(refused.value) and '"$250,000.00"' in str(refused.value)
    engagement.policy_facts = {"policy_cap": "$250,000.00", "max_term_years": 3, "sign_off_needed": True}
    engagement.full_clean()  # text, whole numbers and booleans are kept as written


def test_policy_facts_that_are_not_text_reach_case_facts_as_the_json_the_admin_wrote(engagement):
    engagement.policy_facts = {
        "policy_cap": "$247.83",
        "approved_laws": ["Delaware", "New York"],
        "sign_off_needed": True,
        "reviewer": None,
        "max_term_years": 3,
    }
    engagement.save()
    document = make_contract(engagement)
    facts = parse_case_facts(render_case_facts(checkpoints.facts_for(_run(engagement, document), document)))
    assert facts["approved_laws"] == '["Delaware", "New York"]'  # not Python's ['Delaware', 'New York']
    assert (facts["sign_off_needed"], facts["reviewer"], facts["max_term_years"]) == ("true", "null", "3")
    assert facts["policy_cap"] == "$247.83"


# --------------------------------------------------------------------------- long conversations


def test_fifty_turns_with_compaction_keep_case_facts_verbatim(engagement):
    engagement.policy_facts = {"policy_cap": "$247.83", "customer_id": "cust_4711"}
    engagement.save()
    document = make_contract(engagement)
    chunk_ids = list(document.chunks.order_by("ordinal").values_list("chunk_id", flat=True))
    answers = FakeClaude(dict(ANSWERS))
    seen_facts: list[dict] = []
    turns = {"n": 0}

    def explorer(body):
        seen_facts.append(_system_facts(body))
        turns["n"] += 1
        n = turns["n"]
        if n == 25:  # a decision recorded mid-conversation shows up in the next turn's CASE_FACTS
            from engagements.models import Engagement

            Engagement.objects.filter(pk=engagement.pk).update(
                policy_facts={"policy_cap": "$247.83", "customer_id": "cust_4711", "reviewed_by": "j.doe"}
            )
        if n < 50:
            if n % 2:
                return message(
                    [
                        tool_use_block(
                            "read_chunk", {"chunk_id": chunk_ids[n % len(chunk_ids)], "neighbours": 2}
                        )
                    ],
                    "tool_use",
                )
            return message([tool_use_block("regex_document", {"pattern": r"\$[\d,.]+|cust_\d+"})], "tool_use")
        if n == 50:
            names = re.findall(r"history/compacted-\d{3}\.md", json.dumps(body["messages"]))
            return message(
                [tool_use_block("read_history", {"name": names[0] if names else "missing"})], "tool_use"
            )
        return answers(body)

    api = MockAnthropic(explorer)
    engine = _engine(api, max_turns=60, window_tokens=12_000)
    run = _run(engagement, document, ["Payment"])
    assert pipeline.process_document(run.pk, document.pk, engine=engine) == "done"
    assert ClauseTask.objects.get(run=run).status == "done", ClauseTask.objects.get(run=run).error
    assert len(api.requests) >= 51
    assert Extraction.objects.get(run=run).status == "found"
    cp = Checkpoint.objects.get(run=run, document=document)
    assert len(cp.position["history_files"]) >= 2, "compaction should have run more than once"
    for facts in seen_facts:
        assert facts["policy_cap"] == "$247.83" and facts["customer_id"] == "cust_4711"
    assert seen_facts[-1]["reviewed_by"] == "j.doe" and "reviewed_by" not in seen_facts[10]
    last_system = "\n".join(b["text"] for b in api.requests[-1]["system"])
    assert "policy_cap: $247.83" in last_system and "customer_id: cust_4711" in last_system
    # the history was compacted but stays readable as a virtual file
    read_back = api.requests[50]["messages"][-1]["content"][0]
    assert read_back["type"] == "tool_result" and not read_back.get("is_error"), read_back
    assert "# history/compacted-" in read_back["content"]
    # the turn note reports the budget and what was read
    assert "tokens used" in api.requests[-1]["system"][-1]["text"]
    assert chunk_ids[1] in api.requests[-1]["system"][-1]["text"]
    # its count covers what the request carries besides the messages: the system text and the tools
    first = api.requests[0]
    used = int(re.search(r"tokens used: ([\d,]+)", first["system"][-1]["text"]).group(1).replace(",", ""))
    carried = estimate_tokens(json.dumps(first["tools"])) + estimate_tokens(
        "".join(b["text"] for b in first["system"][:2])
    )
    assert used >= carried


def test_each_clause_question_starts_with_the_earlier_ones_compacted(engagement):
    document = make_contract(engagement)  # short: every question carries the whole text
    api = MockAnthropic(FakeClaude(dict(ANSWERS), search_first={"Payment"}))
    run = _run(engagement, document)
    assert pipeline.process_document(run.pk, document.pk, engine=_engine(api)) == "done"

    sizes = [len(json.dumps(r["messages"])) for r in api.requests]
    assert max(sizes) < 2 * sizes[0]  # not one more document's worth of context per question asked
    last = api.requests[-1]
    assert "[compacted history]" in json.dumps(last["messages"])
    facts = parse_case_facts(last["system"][1]["text"].split("\n", 1)[1])
    assert len(facts["decisions"]) == len(TYPES) - 1  # the earlier answers stay in CASE_FACTS
    cp = Checkpoint.objects.get(run=run, document=document)
    files = cp.position["history_files"]
    assert len(files) == len(TYPES) - 1  # one readable history file per earlier question
    payment = next(text for text in files.values() if "search_document" in text)
    assert ANSWERS["Payment"] in payment  # its whole transcript, the search included
    assert _results(run) == _results_without_compaction(engagement, document)


def _results_without_compaction(engagement, document):
    from extraction.agent.compaction import CompactionPolicy

    run = _run(engagement, document)
    api = MockAnthropic(FakeClaude(dict(ANSWERS), search_first={"Payment"}))
    pipeline.process_document(
        run.pk, document.pk, engine=_engine(api, policy=CompactionPolicy(per_question=False))
    )
    return _results(run)


def test_run_status_is_derived_from_task_rows(engagement):
    document = make_contract(engagement)
    run = _run(engagement, document, ["Governing Law", "Payment"])
    assert run_status.refresh_status(run) == "queued"
    ClauseTask.objects.filter(run=run, clause_type__name="Payment").update(status="done")
    assert run_status.refresh_status(run) == "running"
    ClauseTask.objects.filter(run=run).update(status="done")
    assert run_status.refresh_status(run) == "done"
    assert ExtractionRun.objects.get(pk=run.pk).finished_at is not None
    assert checkpoints.facts_for(run, document).policy_cap == "$247.83"


def test_mock_plays_the_message_batches_endpoints_through_the_sdk():
    api = MockAnthropic(FakeClaude({"Governing Law": None}), batch_polls=2)
    client = api.client()
    params = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 512,
        "messages": [
            {
                "role": "user",
                "content": "clause_id: 7:governing-law\nQuestion: find the Governing Law "
                "clause in this document.\n",
            }
        ],
    }
    batch = client.messages.batches.create(
        requests=[{"custom_id": "t-1", "params": params}, {"custom_id": "t-2", "params": params}]
    )
    assert batch.processing_status == "in_progress" and batch.id.startswith("msgbatch_")
    assert client.messages.batches.retrieve(batch.id).processing_status == "in_progress"
    assert client.messages.batches.retrieve(batch.id).processing_status == "ended"
    results = list(client.messages.batches.results(batch.id))
    assert [r.custom_id for r in results] == ["t-1", "t-2"]
    msg = results[0].result.message
    assert results[0].result.type == "succeeded" and msg.stop_reason == "tool_use"
    assert msg.content[0].name == "report_not_found" and msg.usage.input_tokens > 0
