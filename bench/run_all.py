"""Run every ``bench/bench_*.py`` and keep its JSON in ``bench/results/<name>.json``.

Each benchmark runs in its own process (each starts its own throw-away database), with its
default (full-size) arguments unless ``--quick`` is given. A failing benchmark is recorded
with its error and does not stop the others. A summary goes to ``bench/results/summary.json``
and stdout.

Usage: ``python -m bench.run_all [--quick] [--only NAME ...]``
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
# Small sizes for a smoke run (CI, a laptop in a hurry).
QUICK_ARGS = {
    "bench_embeddings": ["--chunks", "64", "--docs", "3"],
    "bench_ingest": ["--pages", "30", "--no-baseline"],
    "bench_retrieval": ["--docs", "3"],
    "bench_search": ["--one-doc", "2000", "--table-rows", "20000", "--doc-chunks", "500", "--wide-docs", "10",
                     "--queries", "30"],
}


def modules() -> list[str]:
    return sorted(p.stem for p in HERE.glob("bench_*.py"))


def run(name: str, quick: bool) -> dict:
    args = QUICK_ARGS.get(name, []) if quick else []
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", f"bench.{name}", *args], cwd=HERE.parent, env=env,
                          capture_output=True, text=True)
    seconds = round(time.perf_counter() - started, 1)
    out = proc.stdout
    try:
        result = json.loads(out[out.index("{"):]) if "{" in out else {}
    except json.JSONDecodeError:
        result = {}
    if proc.returncode != 0 or not result:
        result = {"error": f"exit {proc.returncode}", "stderr_tail": proc.stderr[-3000:], "stdout_tail": out[-2000:]}
    result["wall_s"] = seconds
    result["args"] = args
    return result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    parser.add_argument("--only", nargs="*", default=None, help="benchmark module names, e.g. bench_search")
    args = parser.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    summary = {}
    for name in args.only or modules():
        print(f"running {name}{' (quick)' if args.quick else ''}...", file=sys.stderr, flush=True)
        result = run(name, args.quick)
        (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
        summary[name] = result
    (RESULTS / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
