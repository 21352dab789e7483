"""The extraction engine's own costs, without network: what a clause costs us besides the model.

Sections (JSON on stdout):

``agent``      the Claude engine over the mock API (``tests.mock_anthropic``: real SDK, real HTTP
               shapes, zero model latency) on the 3-page fixture contract, all 7 of its clause
               types per document: ms per clause and per turn (prompt building, CASE_FACTS from
               the database every turn, tools, verification, persisting, checkpointing).
``long``       one clause that takes 50 agent turns (read_chunk / regex_document) in a 12k-token
               window: compactions and ms per turn.
``verify``     the citation verifier alone on a 200-page synthetic document: citations/s.
``offline``    the offline engine on the fixture contract ingested as a PDF (model warm): ms per
               clause, retrieval and extraction apart.
``checkpoint`` the atomic checkpoint write (CASE_FACTS rebuilt from rows): p50/p95 ms.
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

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _pct(values, q):
    values = sorted(values)
    return round(values[max(0, min(len(values) - 1, int(round(q * (len(values) - 1)))))], 2) if values else None


def bench_agent(engagement, docs: int) -> dict:
    from extraction import pipeline, runs
    from extraction.engines.anthropic import AnthropicEngine
    from tests.integration.extraction_fixtures import ANSWERS, clause_types, make_contract
    from tests.mock_anthropic import FakeClaude, MockAnthropic

    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    engine = AnthropicEngine(client=api.client(), model="claude-sonnet-4-6", max_turns=4)
    types = clause_types()
    started = time.perf_counter()
    for i in range(docs):
        doc = make_contract(engagement, title=f"Bench supply {i}")
        run = runs.create_run(engagement, documents=[doc], clause_types=types, engine="anthropic", enqueue=False)
        pipeline.process_document(run.pk, doc.pk, engine=engine)
    wall = time.perf_counter() - started
    clauses = docs * len(types)
    return {"documents": docs, "clauses": clauses, "requests": len(api.requests),
            "ms_per_clause": round(1000 * wall / clauses, 1), "ms_per_turn": round(1000 * wall / len(api.requests), 1)}


def bench_long(engagement) -> dict:
    from extraction import pipeline, runs
    from extraction.engines.anthropic import AnthropicEngine
    from tests.integration.extraction_fixtures import ANSWERS, clause_types, make_contract
    from tests.mock_anthropic import FakeClaude, MockAnthropic, message, tool_use_block

    doc = make_contract(engagement, title="Bench long")
    ids = list(doc.chunks.order_by("ordinal").values_list("chunk_id", flat=True))
    answer = FakeClaude(dict(ANSWERS))
    n = {"turn": 0}

    def explorer(body):
        n["turn"] += 1
        if n["turn"] < 50:
            if n["turn"] % 2:
                return message([tool_use_block("read_chunk", {"chunk_id": ids[n["turn"] % len(ids)],
                                                              "neighbours": 2})], "tool_use")
            return message([tool_use_block("regex_document", {"pattern": r"\$[\d,.]+"})], "tool_use")
        return answer(body)

    api = MockAnthropic(explorer)
    engine = AnthropicEngine(client=api.client(), model="claude-sonnet-4-6", max_turns=60, window_tokens=12_000)
    run = runs.create_run(engagement, documents=[doc], clause_types=clause_types(["Payment"]), engine="anthropic",
                          enqueue=False)
    started = time.perf_counter()
    pipeline.process_document(run.pk, doc.pk, engine=engine)
    wall = time.perf_counter() - started
    cp = run.checkpoints.get()
    return {"turns": len(api.requests), "compactions": len(cp.position.get("history_files") or {}),
            "ms_per_turn": round(1000 * wall / len(api.requests), 1),
            "last_request_kb": round(len(json.dumps(api.requests[-1])) / 1024, 1)}


def bench_verify() -> dict:
    import random

    from extraction.types import ChunkView
    from extraction.verify import verify_extraction

    rnd = random.Random(3)
    words = "the supplier shall pay customer fees within thirty days of invoice including taxes".split()
    pages, text, chunks = [], "", []
    for p in range(1, 201):
        start = len(text)
        for _ in range(6):
            para = " ".join(rnd.choice(words) for _ in range(80)) + f" Amount ${rnd.randint(1, 99999)}.{rnd.randint(10, 99)}."
            s = len(text)
            text += para + "\n\n"
            chunks.append(ChunkView(f"c{len(chunks)}", len(chunks), para, s, s + len(para), p, p, len(chunks), ""))
        pages.append((p, start, len(text)))
        text += "\f"
    by_id = {c.chunk_id: c for c in chunks}
    cits = []
    for _ in range(2000):
        c = rnd.choice(chunks)
        a = c.text.index(" ", rnd.randint(0, len(c.text) - 120)) + 1  # whole words: the verifier refuses a cut one
        cits.append({"chunk_id": c.chunk_id, "page": c.page_start, "quote": c.text[a:c.text.index(" ", a + 100)]})
    started = time.perf_counter()
    ok = sum(verify_extraction([cit], by_id, pages, cit["quote"], document_text=text).ok for cit in cits)
    wall = time.perf_counter() - started
    return {"document_pages": 200, "citations": len(cits), "verified": ok,
            "citations_per_s": round(len(cits) / wall, 1), "ms_per_citation": round(1000 * wall / len(cits), 3)}


def bench_offline(engagement, tmp) -> dict:
    from extraction.catalog import CATALOG
    from extraction.service import find_clause
    from ingest.intake import intake_file
    from ingest.pipeline import run_pipeline
    from tests.integration.extraction_fixtures import write_contract_pdf

    path = os.path.join(tmp, "bench-supply.pdf")
    write_contract_pdf(path)
    doc = intake_file(engagement, path, filename="bench-supply.pdf", enqueue=False).document
    run_pipeline(doc.pk)
    doc.refresh_from_db()
    find_clause(doc, user=None, clause_type="Governing Law", engine="offline")  # load the model
    times = []
    for ct in CATALOG[:20]:
        t0 = time.perf_counter()
        find_clause(doc, user=None, clause_type=ct.name, engine="offline")
        times.append(1000 * (time.perf_counter() - t0))
    return {"clauses": len(times), "ms_per_clause_p50": _pct(times, 0.5), "ms_per_clause_p95": _pct(times, 0.95),
            "note": "find_clause end to end: run + task rows, retrieval, offline pick, verification, persist"}


def bench_checkpoint(engagement) -> dict:
    from extraction import checkpoints, pipeline, runs
    from extraction.engines.anthropic import AnthropicEngine
    from tests.integration.extraction_fixtures import ANSWERS, clause_types, make_contract
    from tests.mock_anthropic import FakeClaude, MockAnthropic

    doc = make_contract(engagement, title="Bench checkpoint")
    run = runs.create_run(engagement, documents=[doc], clause_types=clause_types(), engine="anthropic", enqueue=False)
    api = MockAnthropic(FakeClaude(dict(ANSWERS)))
    pipeline.process_document(run.pk, doc.pk, engine=AnthropicEngine(client=api.client(), model="claude-sonnet-4-6"))
    snap = checkpoints.snapshot_of(checkpoints.load(run, doc))
    times = []
    for _ in range(50):
        t0 = time.perf_counter()
        checkpoints.save(run, doc, snap, last_record={"bench": True})
        times.append(1000 * (time.perf_counter() - t0))
    return {"writes": len(times), "history_messages": len(snap["history"]), "p50_ms": _pct(times, 0.5),
            "p95_ms": _pct(times, 0.95), "mean_ms": round(statistics.mean(times), 2)}


def bench_cost(engagement, tmp) -> dict:
    from bench._cuad import CREDIT, CUAD
    from extraction import pipeline, runs
    from extraction.compaction import CompactionPolicy
    from extraction.engines.anthropic import AnthropicEngine
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
        engine = AnthropicEngine(client=api.client(), model="claude-sonnet-4-6", max_turns=4,
                                 policy=CompactionPolicy(per_question=per_question))
        run = runs.create_run(engagement, documents=[doc], clause_types=types, engine="anthropic", enqueue=False)
        pipeline.process_document(run.pk, doc.pk, engine=engine)
        run.refresh_from_db()
        out[label] = {"requests": len(api.requests), "input_tokens": run.input_tokens,
                      "cache_read_tokens": run.cache_read_tokens, "cache_write_tokens": run.cache_write_tokens,
                      "cost_usd": round(float(run.cost_usd), 3),
                      "last_request_kb": round(len(json.dumps(api.requests[-1])) / 1024, 1)}
    base, ours = out["baseline_history_carried"], out["questions_compacted"]
    out["input_tokens_ratio"] = round(ours["input_tokens"] / base["input_tokens"], 3)
    out["cost_ratio"] = round(ours["cost_usd"] / base["cost_usd"], 3)
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=5)
    parser.add_argument("--sections", nargs="*", default=["agent", "long", "verify", "offline", "checkpoint", "cost"])
    args = parser.parse_args(argv)
    from bench._django import bench_django

    result: dict = {"bench": "extraction"}
    with bench_django("extraction") as folder:
        from engagements.models import Engagement
        from extraction.catalog_sync import ensure_catalog

        ensure_catalog()
        engagement = Engagement.objects.create(name="bench extraction", policy_facts={"policy_cap": "$247.83"})
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
