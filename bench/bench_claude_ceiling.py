"""The ceiling of the Claude path on cuad-dev: ``evaluate`` with the Anthropic engine answered by a
perfect reader (``bench.perfect_reader``) through the mock API, at K=5 and K=10 (or the ``--k`` given).

Prints JSON: per K the hit rate and silent-source rate the context allows, recall@k, citation validity,
and tokens (input, cache write, cache read, output) and cost per clause and per 41-type contract
(``extraction.usage.cost_usd``, priced at the engine's model); then each figure's K=10/K=5 ratio.
Tokens are the mock's count (a character count / 4, caching simulated), not a real tokenizer's: read
them as the size of what the Claude path sends, to compare K with K, not as an invoice.

Runs on the already-ingested database named by ``EMBEDDED_DIR``/``MEDIA_ROOT`` (nothing re-ingested
there; unset, a throw-away database is made and the corpus ingested into it first), e.g.::

    EMBEDDED_DIR=/work/baseline/var MEDIA_ROOT=/work/baseline/var/media HF_HUB_OFFLINE=1 \\
        TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false \\
        .venv/bin/python bench/bench_claude_ceiling.py --limit 5

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
FIGURES = ("hit_rate", "silent_source_rate", "recall_at_k", "pair_recall_at_k", "citation_validity")


def run_at(k: int, limit: int | None, corpus: Path, say, lenient: bool = False) -> dict:
    from django.test import override_settings

    from bench.perfect_reader import PerfectReader
    from extraction.agent.engine import AnthropicEngine
    from extraction.evaluation import runner
    from extraction.models import ExtractionRun
    from extraction.usage import Usage, cost_usd
    from tests.mock_anthropic import MockAnthropic

    reader = PerfectReader.from_corpus(corpus, lenient=lenient)
    api = MockAnthropic(reader)
    tally = Usage()  # the mock's own count, from every response it sent
    usage_of = api._usage

    def counted(body: dict, out: dict) -> dict:
        u = usage_of(body, out)
        tally.add(u)
        return u

    api._usage = counted  # type: ignore[method-assign]
    engine = AnthropicEngine(client=api.client(), k=k)
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
        "cost_usd_total": round(cost, 6),
        "cost_usd_per_clause": round(cost / pairs, 6),
        "cost_usd_per_contract_41": round(cost / pairs * TYPES_PER_CONTRACT, 4),
        "wall_s": round(time.perf_counter() - started, 1),
    }


def _ratio(a, b):
    return round(a / b, 3) if isinstance(a, int | float) and isinstance(b, int | float) and b else None


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="the first N contracts (default: all)")
    ap.add_argument("--k", type=int, nargs="+", default=[5, 10], help="chunks shown (default: 5 10)")
    ap.add_argument("--corpus", type=Path, default=CUAD)
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
    result: dict = {
        "bench": "claude_ceiling",
        "credit": CREDIT,
        "corpus": str(args.corpus),
        "limit": args.limit,
        "lenient": args.lenient,
        "engine": "anthropic (mock API, perfect reader answering from gold)",
        "by_k": {str(k): v for k, v in by_k.items()},
    }
    if 5 in by_k and 10 in by_k:
        a, b = by_k[10], by_k[5]
        keys = [*FIGURES, "cost_usd_per_clause", "cost_usd_per_contract_41"]
        result["ratio_k10_over_k5"] = {key: _ratio(a[key], b[key]) for key in keys} | {
            f"tokens_{key}": _ratio(a["tokens_per_clause"][key], b["tokens_per_clause"][key])
            for key in a["tokens_per_clause"]
        }
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return result


if __name__ == "__main__":
    main()
