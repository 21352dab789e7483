"""One Claude bulk run end to end through the strict Message Batches mock: the first ``--docs`` (20)
contracts of cuad-dev x ``--types`` (5) clause types, the model played by the perfect reader
(``bench.perfect_reader``), the real ``anthropic`` client over ``tests.mock_anthropic_batches.BatchAPI``
(every batch and every request in it held to the API's contract, ``tests.anthropic_contract``).

The run is what ``bulk_extract`` starts (``bulk.service.start_bulk``); its requests are built and
submitted (``bulk.submit.submit_pending``), each batch polled until it ends (``bulk.poll.refresh``, the
mock ending a batch at its ``--polls`` th poll) and harvested (``bulk.harvest.harvest``); requests
failed by a batch go out again in the next round. Counts are asserted before anything is written:
every request submitted once and answered, no batch or request refused, every clause task done, every
clause stored exactly once, and the run's cost the batch price (50% of standard) of the tokens the
mock counted (``extraction.usage.cost_usd``). Prints JSON and writes
``bench/results/bench_claude_bulk.json``.

Runs on the ingested database named by ``EMBEDDED_DIR``/``MEDIA_ROOT`` (documents reused, nothing
re-ingested; unset, a throw-away database is made and the contracts ingested into it first), e.g.::

    EMBEDDED_DIR=/work/main/var/bench/ceiling MEDIA_ROOT=/work/main/var/bench/ceiling/media \\
        HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false \\
        .venv/bin/python bench/bench_claude_bulk.py --lenient

Data: CUAD v1, The Atticus Project (CC BY 4.0), read from ``../shared/eval/cuad-dev`` (never copied).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CUAD = ROOT.parent / "shared" / "eval" / "cuad-dev"
CREDIT = "CUAD v1, The Atticus Project (CC BY 4.0)"
RESULTS = ROOT / "bench" / "results" / "bench_claude_bulk.json"
FIVE = ["Governing Law", "Cap On Liability", "Termination For Convenience", "Anti-Assignment", "Non-Compete"]
MAX_ROUNDS = 5  # submit, poll, harvest; a request failed by a batch goes out in the next round


def measure(args: argparse.Namespace) -> dict:
    from django.db.models import Count
    from django.test import override_settings

    from bench.perfect_reader import PerfectReader
    from bulk import poll
    from bulk.harvest import harvest
    from bulk.models import BatchItem, BatchJob
    from bulk.service import start_bulk
    from bulk.submit import submit_pending
    from engagements.models import Engagement
    from extraction.evaluation import runner
    from extraction.evaluation.corpus import load_corpus
    from extraction.models import ClauseTask, Extraction, ExtractionRun
    from extraction.usage import Usage, cost_usd
    from tests.mock_anthropic_batches import BatchAPI

    say = (lambda s: print(s, file=sys.stderr)) if args.verbose else (lambda s: None)
    corpus = load_corpus(args.corpus, args.docs)
    engagement, _ = Engagement.objects.get_or_create(
        name=runner.default_engagement_name(args.corpus), defaults={"client": "evaluation corpus"}
    )
    rep = runner.ingest(corpus, engagement, say)  # documents already there are reused
    documents = [rep.documents[n] for n in corpus.names if rep.documents[n].status == "ready"]
    runner.clause_type_rows(args.types)  # the catalog's rows of these types

    reader = PerfectReader.from_corpus(args.corpus, lenient=args.lenient)
    api = BatchAPI(reader, polls_to_end=args.polls)
    tally, sync = Usage(), Usage()  # the mock's own count: batched messages, and messages asked one by one
    usage_of, messages_of, asked = api._usage, api._messages, []

    def counted(body: dict, out: dict) -> dict:
        u = usage_of(body, out)
        (sync if asked else tally).add(u)
        return u

    def one_by_one(body: dict):  # a contract's type, asked before its requests when its title names none
        asked.append(body)
        try:
            return messages_of(body)
        finally:
            asked.pop()

    api._usage = counted  # type: ignore[method-assign]
    api._messages = one_by_one  # type: ignore[method-assign]
    client = api.client()
    started = time.perf_counter()
    with override_settings(ANTHROPIC_API_KEY="sk-ant-dummy"):
        run = start_bulk(
            engagement, clause_types=args.types, documents=documents, engine="anthropic", enqueue=False
        )
        rounds, polls, jobs, lines = 0, 0, [], 0
        timings = {"submit_s": 0.0, "poll_s": 0.0, "harvest_s": 0.0}
        while (
            rounds < MAX_ROUNDS and BatchItem.objects.filter(run=run, state=BatchItem.State.PENDING).exists()
        ):
            rounds += 1
            t0 = time.perf_counter()
            new = submit_pending(run, client=client)
            timings["submit_s"] += time.perf_counter() - t0
            for job in new:
                t0 = time.perf_counter()
                while job.state != BatchJob.State.ENDED:
                    poll.refresh(job, client)
                    polls += 1
                    assert polls < 100 * args.polls, "a batch that never ends"
                timings["poll_s"] += time.perf_counter() - t0
                t0 = time.perf_counter()
                lines += harvest(job, client=client).lines
                timings["harvest_s"] += time.perf_counter() - t0
                job.refresh_from_db()
                jobs.append(job)
    wall = time.perf_counter() - started
    run = ExtractionRun.objects.get(pk=run.pk)

    tasks = ClauseTask.objects.filter(run=run)
    stored = Extraction.objects.filter(run=run)
    per_clause = stored.values("document", "clause_type").annotate(n=Count("id"))
    usage = Usage(run.input_tokens, run.output_tokens, run.cache_write_tokens, run.cache_read_tokens)
    batch_cost = cost_usd(tally, run.model, batch=True)
    standard_cost = cost_usd(tally, run.model)
    sync_cost = cost_usd(sync, run.model)
    submitted = [cid for b in api.created for cid in b["custom_ids"]]
    gold = {(g["doc"], g["clause_type"]): g["present"] for g in corpus.gold}
    name_of = {d.pk: n for n, d in rep.documents.items()}
    statuses = [
        (gold.get((name_of[e.document_id], e.clause_type.name)), e.status)
        for e in stored.select_related("clause_type")
    ]
    n_pairs = len(documents) * len(args.types)
    counts = {
        "documents": len(documents),
        "clause_types": len(args.types),
        "clause_tasks": tasks.count(),
        "tasks_done": tasks.filter(status=ClauseTask.Status.DONE).count(),
        "tasks_failed": tasks.filter(status=ClauseTask.Status.FAILED).count(),
        "rounds": rounds,
        "batches_submitted": len(jobs),
        "batches_refused": len(api.refused),
        "requests_submitted": len(submitted),
        "distinct_requests_submitted": len(set(submitted)),
        "requests_sent_again": len(submitted) - len(set(submitted)),
        "messages_asked_one_by_one": sync.requests,
        "polls": polls,
        "result_lines_harvested": lines,
        "request_refusals": len(api.refusals),
        "extractions_stored": stored.count(),
        "clauses_stored_more_than_once": sum(1 for row in per_clause if row["n"] > 1),
        "clauses_not_stored": n_pairs - len(per_clause),
    }
    checks = {
        "every_task_done": counts["tasks_done"] == counts["clause_tasks"] == n_pairs,
        "every_clause_submitted": counts["distinct_requests_submitted"] == n_pairs,
        "every_line_harvested": lines == len(submitted),
        "nothing_refused": counts["batches_refused"] == counts["request_refusals"] == 0,
        "every_clause_stored_exactly_once": counts["extractions_stored"] == n_pairs
        and counts["clauses_stored_more_than_once"] == counts["clauses_not_stored"] == 0,
        "run_tokens_match_mock": usage.as_dict() | {"requests": 0}
        == (tally + sync).as_dict() | {"requests": 0},
        "cost_at_batch_price": run.cost_usd == batch_cost + sync_cost,
        "batch_price_is_half_standard": abs(float(batch_cost) * 2 - float(standard_cost)) <= 2e-6,
    }
    failed = [name for name, ok in checks.items() if not ok]
    if failed:
        raise AssertionError(f"bulk run {run.pk}: {failed}; counts {counts}")
    tokens = {
        "input": run.input_tokens,
        "cache_write": run.cache_write_tokens,
        "cache_read": run.cache_read_tokens,
        "output": run.output_tokens,
    }
    return {
        "bench": "claude_bulk",
        "credit": CREDIT,
        "corpus": str(args.corpus),
        "lenient": args.lenient,
        "engine": "anthropic (strict batch mock, perfect reader answering from gold)",
        "run_id": run.pk,
        "run_status": run.status,
        "model": run.model,
        "types": args.types,
        "counts": counts,
        "checks": checks,
        "answers": {
            "found_on_present": sum(1 for p, s in statuses if p and s == "found"),
            "not_found_on_present": sum(1 for p, s in statuses if p and s == "not_found"),
            "not_found_on_absent": sum(1 for p, s in statuses if p is False and s == "not_found"),
            "found_on_absent": sum(1 for p, s in statuses if p is False and s == "found"),
            "unverified": sum(1 for _, s in statuses if s == "unverified"),
        },
        "tokens_total": tokens,
        "tokens_per_clause": {k: round(v / n_pairs, 1) for k, v in tokens.items()},
        "cost_usd_total": float(run.cost_usd),
        "cost_usd_batched_requests": float(batch_cost),
        "cost_usd_batched_requests_if_standard": float(standard_cost),
        "cost_usd_asked_one_by_one": float(sync_cost),
        "cost_usd_per_clause": round(float(run.cost_usd) / n_pairs, 6),
        "cost_usd_per_contract_41": round(float(run.cost_usd) / n_pairs * 41, 4),
        "timings_s": {k: round(v, 1) for k, v in timings.items()} | {"wall": round(wall, 1)},
    }


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--docs", type=int, default=20, help="the first N contracts of documents.jsonl (default 20)"
    )
    ap.add_argument("--types", nargs="+", default=FIVE, help="clause types (default: five CUAD types)")
    ap.add_argument("--polls", type=int, default=2, help="polls before the mock ends a batch (default 2)")
    ap.add_argument("--corpus", type=Path, default=CUAD)
    ap.add_argument("--lenient", action="store_true", help="the perfect reader's lenient matching")
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    if os.environ.get("EMBEDDED_DIR"):
        import django

        django.setup()
        result = measure(args)
    else:
        from bench._django import bench_django

        with bench_django("claude_bulk"):
            result = measure(args)
    from bench._django import write_result

    write_result(result, args.results)
    return result


if __name__ == "__main__":
    main()
