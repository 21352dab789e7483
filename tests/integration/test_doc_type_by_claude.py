"""A contract whose title names no type gets one from Claude before its first clause (real
``anthropic`` client over the mock transport): checked evidence, one retry, asked once, never
replacing a type someone gave."""

from __future__ import annotations

import pytest

from extraction import launch, pipeline
from extraction.agent.case_facts import parse_case_facts
from extraction.agent.engine import AnthropicEngine
from extraction.models import Extraction
from ingest.models import Document
from tests.integration.extraction_fixtures import ANSWERS, clause_types, make_contract
from tests.mock_anthropic import FakeClaude, MockAnthropic, message, tool_use_block

pytestmark = pytest.mark.django_db
TYPES = ["Payment", "Governing Law"]
TITLE = "MASTER SUPPLY AGREEMENT"


def _run_once(engagement, document, api):
    run = launch.create_run(
        engagement, documents=[document], clause_types=clause_types(TYPES), engine="anthropic", enqueue=False
    )
    engine = AnthropicEngine(client=api.client(max_retries=0), model="claude-sonnet-4-6", max_turns=4)
    assert pipeline.process_document(run.pk, document.pk, engine=engine) == "done"
    run.refresh_from_db()
    document.refresh_from_db()
    return run


def _classify_calls(api):
    return [r for r in api.requests if (r.get("tool_choice") or {}).get("name") == "classify_document"]


def _facts(body) -> dict:
    return parse_case_facts(next(b["text"] for b in body["system"] if "<case_facts" in b["text"]))


def _answer(doc_type, evidence):
    return message(
        [tool_use_block("classify_document", {"doc_type": doc_type, "evidence": evidence})], "tool_use"
    )


def test_claude_types_an_untyped_contract_and_case_facts_carry_it(engagement):
    document = make_contract(engagement, doc_type="")
    api = MockAnthropic(FakeClaude(dict(ANSWERS), doc_type=("Supply", TITLE)))
    run = _run_once(engagement, document, api)

    assert (document.doc_type, document.doc_type_source) == ("Supply", "model")
    (asked,) = _classify_calls(api)
    assert api.requests[0] is asked  # before the first clause question
    assert {"Supply", "Distributor", "Other"} <= set(
        asked["tools"][0]["input_schema"]["properties"]["doc_type"]["enum"]
    )
    assert TITLE in asked["messages"][0]["content"][0]["text"]  # a short contract is read whole
    assert _facts(api.requests[1])["doc_type"] == "Supply"
    assert Extraction.objects.filter(run=run, status="found").count() == 2
    assert run.input_tokens > 0 and run.cost_usd > 0

    _run_once(engagement, document, api)  # a later run does not ask again
    assert len(_classify_calls(api)) == 1


def test_evidence_not_in_the_document_gets_one_retry_with_the_reason(engagement):
    document = make_contract(engagement, doc_type="")
    api = MockAnthropic(FakeClaude(dict(ANSWERS), doc_type=("Supply", TITLE)))
    api.script.append(_answer("Supply", "SUPPLY AND DISTRIBUTION AGREEMENT"))
    _run_once(engagement, document, api)

    first, retry = _classify_calls(api)
    assert retry["messages"][1]["content"][0]["type"] == "tool_use"
    feedback = retry["messages"][2]["content"][0]
    assert feedback["is_error"] and "is not in the document" in feedback["content"]
    assert (document.doc_type, document.doc_type_source) == ("Supply", "model")


def test_a_classify_input_that_arrives_as_a_string_is_read_and_the_run_goes_on(engagement):
    # the SDK can hand back a tool_use input as a string (anthropic-sdk-python#804)
    import json

    document = make_contract(engagement, doc_type="")
    api = MockAnthropic(FakeClaude(dict(ANSWERS), doc_type=("Supply", TITLE)))
    api.script.extend(
        [
            message([tool_use_block("classify_document", '{"doc_type": "Supply", "evid')], "tool_use"),
            message(
                [tool_use_block("classify_document", json.dumps({"doc_type": "Supply", "evidence": TITLE}))],
                "tool_use",
            ),
        ]
    )
    run = _run_once(engagement, document, api)

    assert (document.doc_type, document.doc_type_source) == ("Supply", "model")
    first, retry = _classify_calls(api)
    assert retry["messages"][1]["content"][0]["input"] == {}  # an object, as the API requires
    assert "is not one of the listed types" in retry["messages"][2]["content"][0]["content"]
    assert Extraction.objects.filter(run=run, status="found").count() == 2


def _as_the_api_checks_tool_results(body):
    """What the API answers a history whose assistant turn holds a tool_use the next user message leaves
    without a tool_result: HTTP 400. None (the model answers) when every tool_use is answered."""
    msgs = body["messages"]
    for turn, reply in zip(msgs, msgs[1:]):
        asked = {
            b["id"] for b in turn["content"] if turn["role"] == "assistant" and b.get("type") == "tool_use"
        }
        answered = {b.get("tool_use_id") for b in reply["content"] if isinstance(b, dict)}
        if asked - answered:
            return MockAnthropic.invalid_request(
                "messages: tool_use ids were found without tool_result blocks immediately after: "
                + ", ".join(sorted(asked - answered))
            )
    return None


def test_a_reply_with_two_rejected_classify_calls_gets_its_retry_with_both_reasons(engagement):
    document = make_contract(engagement, doc_type="")
    api = MockAnthropic(FakeClaude(dict(ANSWERS), doc_type=("Supply", TITLE)))
    calls = [
        tool_use_block("classify_document", {"doc_type": "Supply", "evidence": "A SUPPLY CONTRACT"}),
        tool_use_block("classify_document", {"doc_type": "Loan", "evidence": TITLE}),
    ]
    api.script.extend([message(calls, "tool_use"), _as_the_api_checks_tool_results])
    _run_once(engagement, document, api)

    assert (document.doc_type, document.doc_type_source) == ("Supply", "model")
    first, retry = _classify_calls(api)
    results = retry["messages"][2]["content"]
    assert [r["tool_use_id"] for r in results] == [c["id"] for c in calls]
    assert (
        "is not in the document" in results[0]["content"] and "not one of the listed" in results[1]["content"]
    )


def test_of_two_classify_calls_in_one_reply_the_one_that_passes_is_taken(engagement):
    document = make_contract(engagement, doc_type="")
    api = MockAnthropic(FakeClaude(dict(ANSWERS), doc_type=("Distributor", TITLE)))
    api.script.append(
        message(
            [
                tool_use_block("classify_document", {"doc_type": "Loan", "evidence": TITLE}),
                tool_use_block("classify_document", {"doc_type": "Supply", "evidence": TITLE}),
            ],
            "tool_use",
        )
    )
    _run_once(engagement, document, api)

    assert (document.doc_type, document.doc_type_source) == ("Supply", "model")
    assert len(_classify_calls(api)) == 1


@pytest.mark.parametrize(
    "replies",
    [
        [_answer("Supply", "SUPPLY AND DISTRIBUTION AGREEMENT"), _answer("Supply", "A SUPPLY CONTRACT")],
        [_answer("Other", TITLE)],
        [_answer("Loan", TITLE), _answer("Loan", TITLE)],
    ],
    ids=["evidence-missing-twice", "other", "not-a-listed-type"],
)
def test_no_checked_answer_leaves_the_type_empty_and_is_not_asked_again(engagement, replies):
    document = make_contract(engagement, doc_type="")
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.extend(replies)
    run = _run_once(engagement, document, api)

    assert (document.doc_type, document.doc_type_source) == ("", "model")
    assert _facts(api.requests[len(replies)]).get("doc_type") in (None, "")
    assert Extraction.objects.filter(run=run, status="found").count() == 2  # the clauses still come
    _run_once(engagement, document, api)
    assert len(_classify_calls(api)) == len(replies)


def test_a_failed_call_leaves_the_document_to_ask_again_and_the_run_goes_on(engagement):
    document = make_contract(engagement, doc_type="")
    api = MockAnthropic(FakeClaude(dict(ANSWERS), doc_type=("Supply", TITLE)))
    api.script.append(MockAnthropic.invalid_request("prompt is too long"))
    run = _run_once(engagement, document, api)
    assert (document.doc_type, document.doc_type_source) == ("", "")
    assert Extraction.objects.filter(run=run, status="found").count() == 2

    _run_once(engagement, document, api)
    assert (document.doc_type, document.doc_type_source) == ("Supply", "model")


@pytest.mark.parametrize("source", ["upload", "title", "admin"])
def test_a_type_already_given_is_never_asked_about(engagement, source):
    document = make_contract(engagement, doc_type="Distributor")
    Document.objects.filter(pk=document.pk).update(doc_type_source=source)
    api = MockAnthropic(FakeClaude(dict(ANSWERS), doc_type=("Supply", TITLE)))
    _run_once(engagement, document, api)
    assert not _classify_calls(api)
    assert (document.doc_type, document.doc_type_source) == ("Distributor", source)
