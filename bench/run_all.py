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
    "bench_bulk": ["--docs", "20", "--lines", "2000", "--cuad-limit", "2", "--workers", "1"],
    "bench_chunking": ["--sample", "3", "--every", "30", "--repeat", "1"],
    "bench_citation_boxes": [],  # on a throw-away database there is no run to read: it says so
    "bench_claude_bulk": ["--docs", "2", "--lenient"],
    "bench_claude_ceiling": ["--limit", "2", "--lenient"],
    "bench_demo": ["--pages", "50", "--repeat", "1"],
    "bench_embeddings": ["--chunks", "64", "--docs", "3"],
    "bench_export": ["--docs", "5", "20"],
    "bench_faults": ["--quick"],
    "bench_extraction": ["--docs", "1"],
    "bench_ingest": ["--pages", "30"],
    "bench_ocr": ["--pages", "20"],
    "bench_ocr_quality": ["--docs", "2", "--e2e-pages", "10"],
    "bench_page_click": ["--rounds", "1"],
    "bench_page_images": ["--pages", "30", "--samples", "10"],
    "bench_quantized_recall": ["--docs", "2"],
    "bench_office_pages": ["--pages", "10", "--samples", "5", "--repeat", "1"],
    "bench_retrieval": ["--docs", "3"],
    "bench_review_fragment": [
        "--reviewers",
        "5",
        "--seconds",
        "3",
        "--pages",
        "20",
        "--extra-clauses",
        "5",
        "--think-ms",
        "0",
    ],
    "bench_grid": ["--docs", "100", "--repeat", "5"],
    "bench_search_engagement": ["--chunks", "50000", "--docs", "100", "--subset", "20", "--repeat", "5"],
    "bench_source_tables": ["--rows", "2000", "--repeat", "5"],
    "bench_search": [
        "--one-doc",
        "2000",
        "--table-rows",
        "20000",
        "--doc-chunks",
        "500",
        "--wide-docs",
        "10",
        "--queries",
        "30",
    ],
    "bench_verify": ["--pages", "20", "--repeat", "3"],
}


def modules() -> list[str]:
    return sorted(p.stem for p in HERE.glob("bench_*.py"))


def read_output(out: str) -> dict:
    """The JSON objects a benchmark printed, merged in order (bench_bulk prints one per section as it
    ends it); text between them (a progress line) is skipped. {} when there is none."""
    decoder = json.JSONDecoder()
    merged: dict = {}
    at = out.find("{")
    while at != -1:
        try:
            value, end = decoder.raw_decode(out, at)
        except json.JSONDecodeError:
            at = out.find("{", at + 1)
            continue
        if isinstance(value, dict):
            merged.update(value)
        at = out.find("{", end)
    return merged


def run(name: str, quick: bool) -> dict:
    args = QUICK_ARGS.get(name, []) if quick else []
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", f"bench.{name}", *args],
        cwd=HERE.parent,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = round(time.perf_counter() - started, 1)
    out = proc.stdout
    result = read_output(out)
    if proc.returncode != 0 or not result:
        # what it printed before failing (bench_bulk's finished sections) is kept beside the error
        result = {
            **result,
            "error": f"exit {proc.returncode}",
            "stderr_tail": proc.stderr[-3000:],
            "stdout_tail": out[-2000:],
        }
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
