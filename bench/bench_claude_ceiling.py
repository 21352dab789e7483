"""The ceiling of the Claude path on cuad-dev: ``evaluate`` with the Anthropic engine answered by a
perfect reader (``bench.perfect_reader``) through the strict mock API, at K=5 and K=10 (or the ``--k``
given), and with the rerank (``CLAUDE_RERANK``, ``extraction.agent.rerank``) keeping ``--rerank-k`` of
the top 20 fused candidates, the rerank model played by a perfect or a random chooser
(``bench.rerank_chooser``; ``--rerank perfect random``), which bound what a real model's choice can do.

Prints JSON (and writes ``bench/results/bench_claude_ceiling.json``): per run the hit rate and
silent-source rate the context allows, recall@k, citation validity, and tokens (uncached input, cache
write, cache read, output) and cost per clause and per 41-type contract (``extraction.usage.cost_usd``,
priced at the engine's model; the rerank's tokens and cost, at its model, apart and in the total);
then each figure's K=10/K=5 ratio. Tokens are the mock's count (a character count / 4, caching
simulated), not a real tokenizer's: read them as the size of what the Claude path sends, to compare
run with run, not as an invoice.

Runs on the already-ingested database named by ``EMBEDDED_DIR``/``MEDIA_ROOT`` (nothing re-ingested
there; unset, a throw-away database is made and the corpus ingested into it first), e.g.::

    EMBEDDED_DIR=/work/baseline/var MEDIA_ROOT=/work/baseline/var/media HF_HUB_OFFLINE=1 \\
        TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false \\
        .venv/bin/python bench/bench_claude_ceiling.py --limit 5 --rerank perfect random

Data: CUAD v1, The Atticus Project (CC BY 4.0), read from ``../shared/eval/cuad-dev`` (never copied).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CUAD = ROOT.parent / "shared" / "eval" / "cuad-dev"
CREDIT = "CUAD v1, The Atticus Project (CC BY 4.0)"
TYPES_PER_CONTRACT = 41
RESULTS = ROOT / "bench" / "results" / "bench_claude_ceiling.json"
FIGURES = ("hit_rate", "silent_source_rate", "recall_at_k", "pair_recall_at_k", "citation_validity")


def run_at(
    k: int, limit: int | None, corpus: Path, say, lenient: bool = False, rerank: str | None = None
) -> dict:
    from django.conf import settings
    from django.test import override_settings

    from bench.perfect_reader import PerfectReader
    from bench.rerank_chooser import Chooser, Router
    from extraction.agent.engine import AnthropicEngine
    from extraction.evaluation import runner
    from extraction.models import ExtractionRun
    from extraction.usage import Usage, cost_usd
    from tests.mock_anthropic import MockAnthropic

    reader = PerfectReader.from_corpus(corpus, lenient=lenient)
    chooser = Chooser(reader, rerank) if rerank else None
    api = MockAnthropic(Router(reader, chooser))
    tallies: dict[str, Usage] = {}  # the mock's own count, per model, from every response it sent
    usage_of = api._usage

    def counted(body: dict, out: dict) -> dict:
        u = usage_of(body, out)
        tallies.setdefault(body["model"], Usage()).add(u)
        return u

    api._usage = counted  # type: ignore[method-assign]
    engine = AnthropicEngine(client=api.client(), k=k, rerank=bool(rerank))
    real_engine_for = runner.engine_for
    runner.engine_for = lambda name, *, k, calibration=None: engine  # type: ignore[assignment]
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory() as out, override_settings(ANTHROPIC_API_KEY="sk-ant-dummy"):
            m = runner.evaluate(corpus, Path(out), limit=limit, k=k, engine_name="anthropic", say=say)
    finally:
        runner.engine_for = real_engine_for
    run = ExtractionRun.objects.get(pk=m["run_id"])
    usage = Usage(run.input_tokens, run.output_tokens, run.cache_write_tokens, run.cache_read_tokens)
    overall = m["overall"]
    pairs = overall["pairs"] or 1
    cost = float(cost_usd(usage, engine.model))
    rerank_cost = float(run.rerank_cost_usd)
    tally = tallies.get(engine.model, Usage())

    def per(n: float, scale: float = 1.0) -> float:
        return round(n / pairs * scale, 6 if n < 1000 else 1)

    tokens = {
        "input": usage.input_tokens,
        "cache_write": usage.cache_write_tokens,
        "cache_read": usage.cache_read_tokens,
        "output": usage.output_tokens,
    }
    return {
        "k": k,
        "documents": m["documents"]["total"],
        "documents_not_ready": len(m["documents"]["not_ready"]),
        "pairs": overall["pairs"],
        "present": overall["present"],
        "absent": overall["absent"],
        **{f: overall.get(f) for f in FIGURES},
        "found": overall.get("found"),
        "unverified": overall.get("unverified"),
        "failed": overall.get("failed"),
        "false_not_found_rate": overall.get("false_not_found_rate"),
        "requests": len(api.requests),
        "refusals": len(api.refusals),
        "reader": {
            "answered_found": reader.found,
            "answered_not_found": reader.not_found,
            "refused_then_not_found": reader.retried,
            "unknown_sources": sorted(reader.unknown_source)[:5],
        },
        "model": engine.model,
        "tokens_total": tokens,
        "tokens_run_matches_mock": usage.as_dict() | {"requests": 0} == tally.as_dict() | {"requests": 0},
        "tokens_per_clause": {key: per(v) for key, v in tokens.items()},
        "tokens_per_contract_41": {key: per(v, TYPES_PER_CONTRACT) for key, v in tokens.items()},
        "cost_usd_total": round(cost + rerank_cost, 6),
        "cost_usd_per_clause": round((cost + rerank_cost) / pairs, 6),
        "cost_usd_per_contract_41": round((cost + rerank_cost) / pairs * TYPES_PER_CONTRACT, 4),
        "rerank": None
        if not rerank
        else {
            "chooser": rerank,
            "model": run.rerank_model or engine.rerank_model,
            "pool": settings.CLAUDE_RERANK_POOL,
            "calls": run.rerank_calls,
            "fallbacks": run.rerank_fallbacks,
            "questions_with_gold_in_pool": chooser.holding_gold if chooser else None,
            "of_them_gold_kept": chooser.gold_kept if chooser else None,
            "tokens_total": {"input": run.rerank_input_tokens, "output": run.rerank_output_tokens},
            "tokens_run_match_mock": (run.rerank_input_tokens, run.rerank_output_tokens)
            == _in_out(tallies.get(run.rerank_model or engine.rerank_model, Usage())),
            "tokens_per_clause": {
                "input": per(run.rerank_input_tokens),
                "output": per(run.rerank_output_tokens),
            },
            "tokens_per_call": {
                "input": round(run.rerank_input_tokens / (run.rerank_calls or 1), 1),
                "output": round(run.rerank_output_tokens / (run.rerank_calls or 1), 1),
            },
            "cost_usd_total": round(rerank_cost, 6),
            "cost_usd_per_clause": round(rerank_cost / pairs, 6),
            "cost_usd_per_contract_41": round(rerank_cost / pairs * TYPES_PER_CONTRACT, 4),
        },
        "wall_s": round(time.perf_counter() - started, 1),
    }


def _in_out(u) -> tuple[int, int]:
    return u.input_tokens + u.cache_write_tokens + u.cache_read_tokens, u.output_tokens


def _ratio(a, b):
    return round(a / b, 3) if isinstance(a, int | float) and isinstance(b, int | float) and b else None


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="the first N contracts (default: all)")
    ap.add_argument("--k", type=int, nargs="+", default=[5, 10], help="chunks shown (default: 5 10)")
    ap.add_argument("--corpus", type=Path, default=CUAD)
    ap.add_argument(
        "--rerank",
        nargs="*",
        default=[],
        choices=["perfect", "random"],
        help="also run with the rerank, its model played by these choosers (default: none)",
    )
    ap.add_argument("--rerank-k", type=int, default=5, help="chunks the rerank keeps (default: 5)")
    ap.add_argument("--results", type=Path, default=RESULTS, help=f"JSON written here (default: {RESULTS})")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument(
        "--lenient",
        action="store_true",
        help="the reader also matches any quote mark or dash for another, and parts split over blocks",
    )
    args = ap.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    if os.environ.get("EMBEDDED_DIR"):  # an ingested database: used as it is, nothing migrated
        import django

        django.setup()
        return _measure(args)
    from bench._django import bench_django

    print("EMBEDDED_DIR unset: a throw-away database, the corpus ingested into it first", file=sys.stderr)
    with bench_django("claude_ceiling"):  # never the development database under var/
        return _measure(args)


def _measure(args: argparse.Namespace) -> dict:
    say = (lambda s: print(s, file=sys.stderr)) if args.verbose else (lambda s: None)
    by_k = {}
    for k in args.k:
        by_k[k] = run_at(k, args.limit, args.corpus, say, args.lenient)
        print(f"K={k} done in {by_k[k]['wall_s']} s: {json.dumps(by_k[k])}", file=sys.stderr, flush=True)
    reranked = {}
    for mode in args.rerank:
        reranked[mode] = run_at(args.rerank_k, args.limit, args.corpus, say, args.lenient, rerank=mode)
        print(f"rerank {mode} done: {json.dumps(reranked[mode])}", file=sys.stderr, flush=True)
    result: dict = {
        "bench": "claude_ceiling",
        "credit": CREDIT,
        "corpus": str(args.corpus),
        "limit": args.limit,
        "lenient": args.lenient,
        "engine": "anthropic (mock API, perfect reader answering from gold)",
        "by_k": {str(k): v for k, v in by_k.items()},
        "rerank_from_top_20": {mode: v for mode, v in reranked.items()},
    }
    if 5 in by_k and 10 in by_k:
        a, b = by_k[10], by_k[5]
        keys = [*FIGURES, "cost_usd_per_clause", "cost_usd_per_contract_41"]
        result["ratio_k10_over_k5"] = {key: _ratio(a[key], b[key]) for key in keys} | {
            f"tokens_{key}": _ratio(a["tokens_per_clause"][key], b["tokens_per_clause"][key])
            for key in a["tokens_per_clause"]
        }
    from bench._django import write_result

    write_result(result, args.results)
    return result


if __name__ == "__main__":
    main()
