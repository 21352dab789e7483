"""The seed's rerank (``CLAUDE_RERANK``) against the strict mock API: one call per clause question over
the top 20 fused candidates keeps the K the model chose; any error or bad answer keeps the fused top K;
its tokens and cost are recorded with the run; off by default, and never with the offline engine. The
engagement's K (``context_k``) is what a question is shown."""

from __future__ import annotations

import hashlib
import logging
import re
from decimal import Decimal

import pytest
from django.test import override_settings

from extraction import launch, pipeline
from extraction.agent.engine import AnthropicEngine
from extraction.agent.provenance import parse_blocks
from extraction.agent.rerank import TOOL
from extraction.docview import ScoredChunk, chunk_view
from extraction.engines import get_engine
from extraction.models import Extraction, ExtractionRun
from extraction.usage import Usage, cost_usd
from tests.integration.extraction_fixtures import clause_types
from tests.mock_anthropic import (
    MockAnthropic,
    all_context,
    current_question,
    extract_call,
    message,
    not_found_call,
    text_block,
    tool_use_block,
)

pytestmark = pytest.mark.django_db
GOLD = "This Agreement is governed by the laws of the State of Delaware"
GOLD_AT = 17  # the chunk (ordinal) holding GOLD
FUSED_RANK_OF_GOLD = 12  # 0-based: outside the fused top 5, inside the top 20
CHUNKS = 30
SONNET = "claude-sonnet-4-6"


def _long_contract(engagement):
    """30 paragraphs (~14,000 characters: over the whole-text threshold, so questions get retrieval),
    GOLD in the paragraph of ordinal GOLD_AT."""
    from ingest.models import Chunk, Document, Page

    paras = []
    for i in range(CHUNKS):
        body = " ".join(
            f"Clause {i}.{j} sets out the duties of the parties under schedule {i}-{j}." for j in range(6)
        )
        paras.append(f"{i + 1}. Section {i + 1}. {body}" + (f" {GOLD}." if i == GOLD_AT else ""))
    text, spans = "", []
    for i, para in enumerate(paras):
        if i:
            text += "\n\n"
        spans.append((len(text), para))
        text += para
    assert len(text) > 12_000
    document = Document.objects.create(
        engagement=engagement,
        file="",
        original_name="Long Supply Agreement.pdf",
        title="Long Supply Agreement",
        doc_type="Supply",
        kind="pdf",
        sha256=hashlib.sha256(f"{engagement.pk}:long".encode()).hexdigest(),
        size_bytes=len(text),
        status="ready",
        progress=100,
        text=text,
        page_count=1,
    )
    Page.objects.create(document=document, number=1, char_start=0, char_end=len(text))
    Chunk.objects.bulk_create(
        [
            Chunk(
                document=document,
                chunk_id="c" + hashlib.sha1(para.encode()).hexdigest()[:15],
                ordinal=i,
                text=para,
                char_start=s,
                char_end=s + len(para),
                page_start=1,
                page_end=1,
                paragraph=i,
                section=f"{i + 1}. Section {i + 1}",
            )
            for i, (s, para) in enumerate(spans)
        ]
    )
    return document


class Fused:
    """Retrieval's stand-in: a fixed fused order with the GOLD chunk at FUSED_RANK_OF_GOLD."""

    def __init__(self):
        self.asked: list[int] = []

    def __call__(self, document, clause, k):
        from ingest.models import Chunk

        self.asked.append(k)
        rows = list(Chunk.objects.filter(document=document).order_by("ordinal"))
        others = [r for r in rows if r.ordinal != GOLD_AT]
        order = others[:FUSED_RANK_OF_GOLD] + [rows[GOLD_AT]] + others[FUSED_RANK_OF_GOLD:]
        return [ScoredChunk(chunk_view(r), 1.0 / (60 + n)) for n, r in enumerate(order)][:k]


class Reader:
    """Sonnet as a reader that finds GOLD when it was shown, and Haiku as ``choose`` says."""

    def __init__(self, choose=None):
        self.choose = choose
        self.rerank_requests: list[dict] = []

    def __call__(self, body: dict) -> dict:
        if (body.get("tool_choice") or {}).get("name") == TOOL:
            self.rerank_requests.append(body)
            return self.choose(body)
        clause_id, clause_type = current_question(body)  # type: ignore[misc]
        if GOLD in all_context(body):
            return extract_call(clause_id, clause_type, GOLD, [self._cite(body)])
        return not_found_call(clause_id, clause_type)

    @staticmethod
    def _cite(body: dict) -> dict:
        for tag, text in parse_blocks(all_context(body)):
            if GOLD in text:
                return {"chunk_id": tag.chunk_ids[0], "page": tag.page_start, "quote": GOLD}
        raise AssertionError("GOLD not shown")


def chose(*numbers):
    return lambda body: message([tool_use_block(TOOL, {"passages": list(numbers)})], "tool_use")


def _run(engagement, document, api, *, rerank=None, retrieve=None):
    run = launch.create_run(
        engagement,
        documents=[document],
        clause_types=clause_types(["Governing Law"]),
        engine="anthropic",
        enqueue=False,
    )
    ExtractionRun.objects.filter(pk=run.pk).update(model=SONNET)
    engine = AnthropicEngine(client=api.client(max_retries=0), model=SONNET, max_turns=1, rerank=rerank)
    events: list[dict] = []
    assert (
        pipeline.process_document(
            run.pk, document.pk, engine=engine, retrieve=retrieve or Fused(), observe=events.append
        )
        == "done"
    )
    run.refresh_from_db()
    return run, events


def _shown(event) -> list[int]:
    return [sc.chunk.ordinal for sc in event["retrieved"]]


def test_off_by_default_the_question_is_shown_the_fused_top_k(engagement):
    document = _long_contract(engagement)
    assert AnthropicEngine(client=object()).reranker() is None  # CLAUDE_RERANK defaults to off
    api = MockAnthropic(Reader())
    fused = Fused()
    run, (event,) = _run(engagement, document, api, retrieve=fused)
    assert fused.asked == [5]  # the engagement's K, 5 by default
    assert api.refusals == [] and all(b["model"] == SONNET for b in api.requests)
    assert len(api.requests) == 1  # the clause question only: no rerank call
    assert GOLD_AT not in _shown(event) and len(_shown(event)) == 5
    assert Extraction.objects.get(run=run).status == "not_found"
    assert (run.rerank_calls, run.rerank_input_tokens, run.rerank_cost_usd) == (0, 0, 0)


def test_the_offline_engine_never_reranks(engagement):
    with override_settings(CLAUDE_RERANK=True):
        assert getattr(get_engine("offline"), "reranker", None) is None
        assert AnthropicEngine(client=object()).reranker() is not None


def test_the_rerank_keeps_the_models_choice_and_records_its_tokens_and_cost(engagement):
    document = _long_contract(engagement)
    reader = Reader(chose(FUSED_RANK_OF_GOLD + 1, 1, 2, 3, 4))
    api = MockAnthropic(reader)
    usages: list[tuple[str, dict]] = []
    usage_of = api._usage

    def counted(body, out):
        u = usage_of(body, out)
        usages.append((body["model"], u))
        return u

    api._usage = counted  # type: ignore[method-assign]
    fused = Fused()
    run, (event,) = _run(engagement, document, api, rerank=True, retrieve=fused)

    assert api.refusals == []  # every request held to the API's contract
    assert fused.asked == [20]  # the pool, of which 5 are kept
    (req,) = reader.rerank_requests
    assert req["model"] == "claude-haiku-5-5"  # CLAUDE_RERANK_MODEL's default
    assert req["tool_choice"] == {"type": "tool", "name": TOOL} and req["thinking"] == {"type": "disabled"}
    question = req["messages"][0]["content"]
    assert len(re.findall(r"^\[\d+\] chunk c[0-9a-f]{15}", question, re.M)) == 20
    assert "Choose exactly 5 different passage numbers" in question
    items = req["tools"][0]["input_schema"]["properties"]["passages"]["items"]
    assert items["enum"] == list(range(1, 21))

    assert _shown(event)[0] == GOLD_AT and len(_shown(event)) == 5  # the model's order
    ex = Extraction.objects.get(run=run)
    assert ex.status == "found" and ex.clause_text == GOLD

    rerank = Usage().add(next(u for m, u in usages if m == "claude-haiku-5-5"))
    clause = Usage().add(next(u for m, u in usages if m == SONNET))
    assert (run.rerank_calls, run.rerank_fallbacks, run.rerank_model) == (1, 0, "claude-haiku-5-5")
    assert (
        run.rerank_input_tokens == rerank.input_tokens + rerank.cache_read_tokens + rerank.cache_write_tokens
    )
    assert run.rerank_output_tokens == rerank.output_tokens > 0
    assert run.rerank_cost_usd == cost_usd(rerank, "claude-haiku-5-5") > 0
    assert run.input_tokens == clause.input_tokens  # the run's own fields hold the clause model's tokens
    assert run.cost_usd == cost_usd(clause, SONNET) + cost_usd(rerank, "claude-haiku-5-5")


BAD_ANSWERS = {
    "out of range": chose(21, 1, 2, 3, 4),
    "zero": chose(0, 1, 2, 3, 4),
    "repeats": chose(13, 13, 1, 2, 3),
    "too few": chose(13, 1, 2),
    "too many": chose(13, 1, 2, 3, 4, 5),
    "not numbers": lambda body: message([tool_use_block(TOOL, {"passages": ["13", "1"]})], "tool_use"),
    "no tool call": lambda body: message([text_block("Passage 13.")], "end_turn"),
    "refusal": lambda body: message([], "refusal"),
    "overloaded 529": lambda body: MockAnthropic.overloaded(),
    "invalid 400": lambda body: MockAnthropic.invalid_request("messages: something is wrong"),
}


@pytest.mark.parametrize("answer", BAD_ANSWERS, ids=list(BAD_ANSWERS))
def test_any_error_or_bad_answer_keeps_the_fused_order(engagement, answer, caplog):
    document = _long_contract(engagement)
    reader = Reader(BAD_ANSWERS[answer])
    api = MockAnthropic(reader)
    with caplog.at_level(logging.WARNING, logger="extraction.agent.rerank"):
        run, (event,) = _run(engagement, document, api, rerank=True)
    assert api.refusals == [] or answer == "invalid 400"
    fused = [sc.chunk.ordinal for sc in Fused()(document, None, 5)]
    assert _shown(event) == fused  # the fused top 5, in the fused order
    assert Extraction.objects.get(run=run).status == "not_found"  # the question was still asked
    assert (run.rerank_calls, run.rerank_fallbacks) == (1, 1)
    assert any("kept the fused order" in r.getMessage() for r in caplog.records)
    if answer == "overloaded 529":  # retried once by the SDK, then given up
        assert len(reader.rerank_requests) == 2
    if answer in ("overloaded 529", "invalid 400"):
        assert run.rerank_input_tokens == 0 and run.rerank_cost_usd == Decimal(0)  # nothing billed
    else:
        assert run.rerank_input_tokens > 0 and run.rerank_cost_usd > 0  # an answer, billed, not taken


def test_the_engagements_k_is_what_a_question_is_shown_and_what_the_rerank_keeps(engagement):
    engagement.context_k = 8
    engagement.save(update_fields=["context_k"])
    document = _long_contract(engagement)
    fused = Fused()
    _, (event,) = _run(engagement, document, MockAnthropic(Reader()), retrieve=fused)
    assert fused.asked == [8] and len(_shown(event)) == 8

    reader = Reader(chose(13, 1, 2, 3, 4, 5, 6, 7))
    api = MockAnthropic(reader)
    _, (event,) = _run(engagement, document, api, rerank=True)
    assert "Choose exactly 8 different" in reader.rerank_requests[0]["messages"][0]["content"]
    assert _shown(event)[0] == GOLD_AT and len(_shown(event)) == 8
    assert api.refusals == []
    shown = {c for tag, _ in parse_blocks(all_context(api.requests[-1])) for c in tag.chunk_ids}
    assert len(shown) == 8  # the clause question's context: the 8 kept
