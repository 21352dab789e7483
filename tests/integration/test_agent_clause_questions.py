"""What each clause question of the Claude agent keeps to itself: its question stays in the live
messages through every compaction, a context window exceeded at its first turn is compacted and retried,
a raised output budget ends with it, and a free question is asked as it was written."""

from __future__ import annotations

import json

import pytest

from extraction import launch, pipeline
from extraction.agent.engine import AnthropicEngine
from extraction.models import Checkpoint, ClauseTask, Extraction
from extraction.service import find_clause, question_type
from tests.integration.extraction_fixtures import ANSWERS, clause_types, make_contract
from tests.mock_anthropic import FakeClaude, MockAnthropic, extract_call, message, text_block, tool_use_block

pytestmark = pytest.mark.django_db


def _run(engagement, document, names):
    return launch.create_run(
        engagement, documents=[document], clause_types=clause_types(names), engine="anthropic", enqueue=False
    )


def _engine(api, **kw):
    kw.setdefault("max_turns", 4)
    return AnthropicEngine(client=api.client(max_retries=0), model="claude-sonnet-4-6", **kw)


def _user_text(body) -> str:
    return json.dumps([m["content"] for m in body["messages"] if m["role"] == "user"], ensure_ascii=False)


def test_a_compaction_inside_a_question_keeps_the_question_live(engagement):
    document = make_contract(engagement)
    chunk_ids = list(document.chunks.order_by("ordinal").values_list("chunk_id", flat=True))
    answers = FakeClaude(dict(ANSWERS))
    turns = {"n": 0}

    def explorer(body):  # reads chunk after chunk for 30 turns, then answers
        turns["n"] += 1
        if turns["n"] < 30:
            chunk = chunk_ids[turns["n"] % len(chunk_ids)]
            return message([tool_use_block("read_chunk", {"chunk_id": chunk, "neighbours": 2})], "tool_use")
        return answers(body)

    api = MockAnthropic(explorer)
    run = _run(engagement, document, ["Payment"])
    cid = f"{document.pk}:payment"
    assert pipeline.process_document(
        run.pk, document.pk, engine=_engine(api, max_turns=40, window_tokens=9_000)
    )
    assert Extraction.objects.get(run=run).status == "found"
    compacted = [r for r in api.requests if "[compacted history]" in _user_text(r)]
    assert compacted, "the small window must have compacted the question's turns"
    question = api.requests[0]["messages"][0]["content"][0]["text"]
    assert question.startswith(f"clause_id: {cid}\nQuestion: find the Payment clause")
    for body in compacted:  # the question, whole (description, context, clause_id), in every later request
        assert question in [b.get("text") for m in body["messages"] for b in m["content"]]


def test_context_window_exceeded_at_a_documents_first_question_is_compacted_and_retried(engagement):
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    api.script.append(message([], "model_context_window_exceeded"))
    run = _run(engagement, document, ["Payment", "Governing Law"])
    assert pipeline.process_document(run.pk, document.pk, engine=_engine(api)) == "done"

    assert dict(ClauseTask.objects.filter(run=run).values_list("clause_type__name", "status")) == {
        "Payment": "done",
        "Governing Law": "done",
    }
    payment = Extraction.objects.get(run=run, clause_type__name="Payment")
    assert payment.status == "found" and payment.clause_text == ANSWERS["Payment"]
    retry = api.requests[1]["messages"][0]["content"][0]["text"]
    cid = f"{document.pk}:payment"
    assert retry.startswith(f"clause_id: {cid}\nQuestion: find the Payment clause")  # the question stays
    assert f'history/context-{document.pk}-payment.md" to fit the context window' in retry
    assert "=== §" not in retry  # its context went to the history file ...
    files = Checkpoint.objects.get(run=run, document=document).position["history_files"]
    assert ANSWERS["Payment"] in files[f"history/context-{document.pk}-payment.md"]  # ... whole


def test_a_raised_output_budget_ends_with_its_clause(engagement):
    document = make_contract(engagement)
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    truncated = message(
        [text_block("The clause reads: "), tool_use_block("extract_clause", {"clause_id": "x"})], "max_tokens"
    )
    api.script.append(truncated)  # the first clause's first answer stops at max_tokens
    run = _run(engagement, document, ["Payment", "Governing Law", "Cap On Liability"])
    engine = _engine(api, max_tokens=1024)
    assert pipeline.process_until_done(run.pk, document.pk, engine=engine) == "done"

    budgets = [
        (r["max_tokens"], r["system"][-1]["text"].split("Current question: ")[1][:40]) for r in api.requests
    ]
    payment = [b for b, asked in budgets if "Payment" in asked]
    others = [b for b, asked in budgets if "Payment" not in asked]
    assert payment == [1024, 2048]  # raised for the clause that stopped, kept across its resume
    assert others and set(others) == {1024}  # the next clauses start at the configured budget
    assert Extraction.objects.filter(run=run).count() == 3


def test_a_free_question_is_asked_as_it_was_written(engagement):
    document = make_contract(engagement)
    asked = "What unit fee per pallet does the customer pay?"
    name = question_type(asked).name
    chunk = next(c for c in document.chunks.all() if ANSWERS["Payment"] in c.text)
    cid = f"{document.pk}:{question_type(asked).slug}"
    api = MockAnthropic(FakeClaude({}))
    api.script.append(
        extract_call(
            cid,
            name,
            ANSWERS["Payment"],
            [{"chunk_id": chunk.chunk_id, "page": 2, "quote": ANSWERS["Payment"]}],
        )
    )
    ex = find_clause(document, user=None, question=asked, engine=_engine(api))

    assert ex is not None and ex.status == "found" and ex.clause_text == ANSWERS["Payment"]
    (request,) = api.requests
    question = request["messages"][0]["content"][0]["text"]
    assert question.startswith(f"clause_id: {cid}\nQuestion: {asked}\n")
    assert f'clause_type "{name}"' in question  # what to echo
    note = request["system"][-1]["text"]
    assert f"answer “{asked}”" in note
    assert "find the Q:" not in question + note
