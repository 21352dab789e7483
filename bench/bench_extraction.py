"""The extraction engine's own costs, without network: what a clause costs us besides the model.

Sections (JSON on stdout), each with a baseline measured in the same run on the same inputs and
a ratio whose name says which way it points (``slowdown_vs_X``: our time / X's time, > 1: we are
slower; ``X_ratio_vs_Y``: ours / Y's):

``agent``      the Claude engine over the mock API (``tests.mock_anthropic``: real SDK, real HTTP
               shapes, zero model latency) on the 3-page fixture contract, all 7 of its clause
               types per document: ms per clause and per turn (prompt building, CASE_FACTS from
               the database every turn, tools, verification, persisting, checkpointing).
               Baseline: the very request bodies the engine sent, replayed straight through the SDK
               to a fresh mock (no engine): ``slowdown_vs_bare_api_calls`` is what the engine adds
               to each turn's round trip.
``long``       one clause that takes 50 agent turns (read_chunk / regex_document) in a 12k-token
               window: compactions and ms per turn. Baseline: the same 50 turns in the default
               window (no compaction): ``slowdown_vs_no_compaction`` (ms per turn) and
               ``last_request_size_ratio_vs_no_compaction`` (what compaction keeps the request to).
``verify``     the citation verifier alone on a 200-page synthetic document: citations/s.
               Baseline: the minimum a verifier must do, a whitespace-normalised substring test of
               each quote in its chunk: ``slowdown_vs_naive_substring`` is what the stricter checks
               (normalisation, whole words, exact offsets and pages, grounding, values) cost.
``offline``    the offline engine on the fixture contract ingested as a PDF (model warm): ms per
               clause. Baseline: retrieval alone (``extraction.retrieval.retrieve``) for the same
               clause types: ``slowdown_vs_retrieval`` is the engine's own overhead (its pick, run
               and task rows, verification, persisting). Both timed warm (query and sentence
               vectors cached by an untimed retrieval pass), so neither pays the other's cache misses.
``checkpoint`` the atomic checkpoint write (CASE_FACTS rebuilt from rows): p50/p95 ms. Baseline: a
               plain UPDATE of the same row with the same values: ``slowdown_vs_plain_update`` is
               what the row lock and rebuilding CASE_FACTS cost.
``cost``       the tokens the Claude engine sends (mock API: its usage counts the request's size) to
               extract every catalog type from one CUAD contract (CUAD v1, The Atticus Project,
               CC BY 4.0), each question starting with the earlier questions' turns compacted (ours)
               against the baseline that carries the whole history from question to question.

Usage: ``python -m bench.bench_extraction [--docs 5] [--sections agent long verify offline checkpoint]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

from bench._django import percentiles, ratio

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def bench_agent(engagement, docs: int) -> dict:
    from extraction import launch, pipeline
    from extraction.agent.engine import AnthropicEngine
    from tests.integration.extraction_fixtures import ANSWERS, clause_types, make_contract
    from tests.mock_anthropic import FakeClaude, MockAnthropic

    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    engine = AnthropicEngine(client=api.client(), model="claude-sonnet-4-6", max_turns=4)
    types = clause_types()
    started = time.perf_counter()
    for i in range(docs):
        doc = make_contract(engagement, title=f"Bench supply {i}")
        run = launch.create_run(
            engagement, documents=[doc], clause_types=types, engine="anthropic", enqueue=False
        )
        pipeline.process_document(run.pk, doc.pk, engine=engine)
    wall = time.perf_counter() - started
    clauses = docs * len(types)
    ms_per_turn = 1000 * wall / len(api.requests)
    bare = bare_api_ms_per_request(api.requests)
    return {
        "documents": docs,
        "clauses": clauses,
        "requests": len(api.requests),
        "ms_per_clause": round(1000 * wall / clauses, 1),
        "ms_per_turn": round(ms_per_turn, 1),
        "baseline_bare_api_ms_per_request": round(bare, 2),
        "slowdown_vs_bare_api_calls": ratio(ms_per_turn, bare),
    }


def bare_api_ms_per_request(bodies: list[dict]) -> float:
    """The same request bodies sent straight through the SDK to a fresh mock API (the same answers):
    the round trip a turn cannot avoid (serialising, the mock transport, parsing the reply), no engine."""
    from tests.integration.extraction_fixtures import ANSWERS
    from tests.mock_anthropic import FakeClaude, MockAnthropic

    client = MockAnthropic(FakeClaude(dict(ANSWERS))).client()
    started = time.perf_counter()
    for body in bodies:
        client.messages.create(**body)
    return 1000 * (time.perf_counter() - started) / len(bodies)


def bench_long(engagement) -> dict:
    ours = long_clause(engagement, window_tokens=12_000)
    base = long_clause(engagement, window_tokens=None)  # the default window: 50 turns fit, no compaction
    return {
        **ours,
        "baseline_no_compaction": base,
        "slowdown_vs_no_compaction": ratio(ours["ms_per_turn"], base["ms_per_turn"]),
        "last_request_size_ratio_vs_no_compaction": ratio(ours["last_request_kb"], base["last_request_kb"]),
    }


def long_clause(engagement, window_tokens: int | None) -> dict:
    """One clause that takes 50 agent turns; ``window_tokens`` None: the engine's default window."""
    from extraction import launch, pipeline
    from extraction.agent.engine import AnthropicEngine
    from tests.integration.extraction_fixtures import ANSWERS, clause_types, make_contract
    from tests.mock_anthropic import FakeClaude, MockAnthropic, message, tool_use_block

    doc = make_contract(engagement, title=f"Bench long {window_tokens or 'default'}")
    ids = list(doc.chunks.order_by("ordinal").values_list("chunk_id", flat=True))
    answer = FakeClaude(dict(ANSWERS))
    n = {"turn": 0}

    def explorer(body):
        n["turn"] += 1
        if n["turn"] < 50:
            if n["turn"] % 2:
                return message(
                    [tool_use_block("read_chunk", {"chunk_id": ids[n["turn"] % len(ids)], "neighbours": 2})],
                    "tool_use",
                )
            return message([tool_use_block("regex_document", {"pattern": r"\$[\d,.]+"})], "tool_use")
        return answer(body)

    api = MockAnthropic(explorer)
    engine = AnthropicEngine(
        client=api.client(), model="claude-sonnet-4-6", max_turns=60, window_tokens=window_tokens
    )
    run = launch.create_run(
        engagement, documents=[doc], clause_types=clause_types(["Payment"]), engine="anthropic", enqueue=False
    )
    started = time.perf_counter()
    pipeline.process_document(run.pk, doc.pk, engine=engine)
    wall = time.perf_counter() - started
    cp = run.checkpoints.get()
    return {
        "window_tokens": engine.window_tokens,
        "turns": len(api.requests),
        "compactions": len(cp.position.get("history_files") or {}),
        "ms_per_turn": round(1000 * wall / len(api.requests), 1),
        "last_request_kb": round(len(json.dumps(api.requests[-1])) / 1024, 1),
    }


def bench_verify() -> dict:
    import random

    from extraction.verify import verify_extraction
    from ingest.chunker import ChunkSpec

    rnd = random.Random(3)
    words = [
        "the",
        "supplier",
        "shall",
        "pay",
        "customer",
        "fees",
        "within",
        "thirty",
        "days",
        "of",
        "invoice",
        "including",
        "taxes",
    ]
    pages, text, chunks = [], "", []
    for p in range(1, 201):
        start = len(text)
        for _ in range(6):
            para = (
                " ".join(rnd.choice(words) for _ in range(80))
                + f" Amount ${rnd.randint(1, 99999)}.{rnd.randint(10, 99)}."
            )
            s = len(text)
            text += para + "\n\n"
            chunks.append(
                ChunkSpec(f"c{len(chunks)}", len(chunks), para, s, s + len(para), p, p, len(chunks), "")
            )
        pages.append((p, start, len(text)))
        text += "\f"
    by_id = {c.chunk_id: c for c in chunks}
    cits = []
    for _ in range(2000):
        c = rnd.choice(chunks)
        a = (
            c.text.index(" ", rnd.randint(0, len(c.text) - 120)) + 1
        )  # whole words: the verifier refuses a cut one
        cits.append(
            {"chunk_id": c.chunk_id, "page": c.page_start, "quote": c.text[a : c.text.index(" ", a + 100)]}
        )
    started = time.perf_counter()
    ok = sum(verify_extraction([cit], by_id, pages, cit["quote"], document_text=text).ok for cit in cits)
    wall = time.perf_counter() - started
    started = time.perf_counter()
    naive_ok = sum(naive_verify(cit, by_id) for cit in cits)
    naive_wall = time.perf_counter() - started
    return {
        "document_pages": 200,
        "citations": len(cits),
        "verified": ok,
        "citations_per_s": round(len(cits) / wall, 1),
        "ms_per_citation": round(1000 * wall / len(cits), 3),
        "baseline_naive_substring": {
            "verified": naive_ok,
            "citations_per_s": round(len(cits) / naive_wall, 1),
            "ms_per_citation": round(1000 * naive_wall / len(cits), 4),
        },
        "slowdown_vs_naive_substring": ratio(wall, naive_wall, 1),
    }


def naive_verify(citation: dict, chunks: dict) -> bool:
    """The minimum check: the quote, whitespace runs collapsed, is a substring of its chunk's text."""
    chunk = chunks.get(citation["chunk_id"])
    return chunk is not None and " ".join(citation["quote"].split()) in " ".join(chunk.text.split())


def bench_offline(engagement, tmp) -> dict:
    from extraction.catalog import CATALOG
    from extraction.retrieval import DEFAULT_K, retrieve
    from extraction.service import find_clause, resolve_type
    from ingest.intake import intake_file
    from ingest.pipeline import run_pipeline
    from tests.integration.extraction_fixtures import write_contract_pdf

    path = os.path.join(tmp, "bench-supply.pdf")
    write_contract_pdf(path)
    doc = intake_file(engagement, path, filename="bench-supply.pdf", enqueue=False).document
    run_pipeline(doc.pk)
    doc.refresh_from_db()
    find_clause(doc, user=None, clause_type="Governing Law", engine="offline")  # load the model
    types = [resolve_type(ct.name) for ct in CATALOG[:20]]
    for ct in types:  # warm the query and sentence vectors of these types for both timings below
        retrieve(doc, ct, DEFAULT_K)
    base = []
    for ct in types:
        t0 = time.perf_counter()
        retrieve(doc, ct, DEFAULT_K)
        base.append(1000 * (time.perf_counter() - t0))
    times = []
    for ct in types:
        t0 = time.perf_counter()
        find_clause(doc, user=None, clause_type=ct.name, engine="offline")
        times.append(1000 * (time.perf_counter() - t0))
    return {
        "clauses": len(times),
        "per_clause": percentiles(times),
        "note": "find_clause end to end: run + task rows, retrieval, offline pick, verification, persist",
        "baseline_retrieval_alone": percentiles(base),
        "slowdown_vs_retrieval": ratio(statistics.median(times), statistics.median(base)),
    }


def bench_checkpoint(engagement) -> dict:
    from django.utils import timezone

    from extraction import checkpoints, launch, pipeline
    from extraction.agent.engine import AnthropicEngine
    from extraction.models import Checkpoint
    from tests.integration.extraction_fixtures import ANSWERS, clause_types, make_contract
    from tests.mock_anthropic import FakeClaude, MockAnthropic

    doc = make_contract(engagement, title="Bench checkpoint")
    run = launch.create_run(
        engagement, documents=[doc], clause_types=clause_types(), engine="anthropic", enqueue=False
    )
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    pipeline.process_document(
        run.pk, doc.pk, engine=AnthropicEngine(client=api.client(), model="claude-sonnet-4-6")
    )
    snap = checkpoints.snapshot_of(checkpoints.load(run, doc))
    times = []
    for _ in range(50):
        t0 = time.perf_counter()
        checkpoints.save(run, doc, snap, last_record={"bench": True})
        times.append(1000 * (time.perf_counter() - t0))
    row = checkpoints.load(run, doc)
    same = {
        "case_facts": row.case_facts,
        "position": row.position,
        "history": row.history,
        "last_record": row.last_record,
    }
    base = []
    for _ in range(50):  # the same values written by one plain UPDATE: no lock, no CASE_FACTS rebuilt
        t0 = time.perf_counter()
        Checkpoint.objects.filter(pk=row.pk).update(**same, updated_at=timezone.now())
        base.append(1000 * (time.perf_counter() - t0))
    return {
        "writes": len(times),
        "history_messages": len(snap["history"]),
        **percentiles(times),
        "mean_ms": round(statistics.mean(times), 2),
        "baseline_plain_update": percentiles(base),
        "slowdown_vs_plain_update": ratio(statistics.median(times), statistics.median(base)),
    }


def bench_cost(engagement, tmp) -> dict:
    from bench._cuad import CREDIT, CUAD
    from extraction import launch, pipeline
    from extraction.agent.compaction import CompactionPolicy
    from extraction.agent.engine import AnthropicEngine
    from extraction.models import ClauseType
    from ingest.intake import intake_file
    from ingest.pipeline import run_pipeline
    from tests.mock_anthropic import FakeClaude, MockAnthropic

    pdf = CUAD / "pdf" / "Loop Industries, Inc. - Marketing Agreement.pdf"  # 17 pages
    if not pdf.is_file():
        return {"skipped": f"no {pdf}"}
    doc = intake_file(engagement, str(pdf), filename=pdf.name, enqueue=False).document
    run_pipeline(doc.pk)
    doc.refresh_from_db()
    types = list(ClauseType.objects.filter(active=True))
    out = {"contract": pdf.stem, "pages": doc.page_count, "clause_types": len(types), "credit": CREDIT}
    for label, per_question in (("baseline_history_carried", False), ("questions_compacted", True)):
        api = MockAnthropic(FakeClaude({}))  # every answer not_found: one turn per clause type
        engine = AnthropicEngine(
            client=api.client(),
            model="claude-sonnet-4-6",
            max_turns=4,
            policy=CompactionPolicy(per_question=per_question),
        )
        run = launch.create_run(
            engagement, documents=[doc], clause_types=types, engine="anthropic", enqueue=False
        )
        pipeline.process_document(run.pk, doc.pk, engine=engine)
        run.refresh_from_db()
        out[label] = {
            "requests": len(api.requests),
            "input_tokens": run.input_tokens,
            "cache_read_tokens": run.cache_read_tokens,
            "cache_write_tokens": run.cache_write_tokens,
            "cost_usd": round(float(run.cost_usd), 3),
            "last_request_kb": round(len(json.dumps(api.requests[-1])) / 1024, 1),
        }
    base, ours = out["baseline_history_carried"], out["questions_compacted"]
    out["input_tokens_ratio"] = round(ours["input_tokens"] / base["input_tokens"], 3)
    out["cost_ratio"] = round(ours["cost_usd"] / base["cost_usd"], 3)
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=5)
    parser.add_argument(
        "--sections", nargs="*", default=["agent", "long", "verify", "offline", "checkpoint", "cost"]
    )
    args = parser.parse_args(argv)
    from bench._django import bench_django

    result: dict = {"bench": "extraction"}
    with bench_django("extraction") as folder:
        from engagements.models import Engagement
        from extraction.catalog.sync import ensure_catalog

        ensure_catalog()
        engagement = Engagement.objects.create(
            name="bench extraction", policy_facts={"policy_cap": "$247.83"}
        )
        if "agent" in args.sections:
            result["agent"] = bench_agent(engagement, args.docs)
        if "long" in args.sections:
            result["long"] = bench_long(engagement)
        if "verify" in args.sections:
            result["verify"] = bench_verify()
        if "offline" in args.sections:
            folder.mkdir(parents=True, exist_ok=True)
            result["offline"] = bench_offline(engagement, str(folder))
        if "checkpoint" in args.sections:
            result["checkpoint"] = bench_checkpoint(engagement)
        if "cost" in args.sections:
            folder.mkdir(parents=True, exist_ok=True)
            result["cost"] = bench_cost(engagement, str(folder))
    result["load_average_1m_at_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
