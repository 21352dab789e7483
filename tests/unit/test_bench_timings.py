"""The timings kept out of the tests: bench/bench_verify.py and bench/bench_demo.py print each figure with
its ratio to a baseline measured in the same run (what the tests assert is behaviour, not time)."""

from __future__ import annotations

import json
import sys

import pytest


def run_bench(module, argv, monkeypatch, capsys) -> dict:
    monkeypatch.setattr(sys, "argv", [module.__name__, *argv])
    module.main()
    return json.loads(capsys.readouterr().out)


def test_the_verifier_bench_places_every_citation_and_compares_with_exact_search(monkeypatch, capsys):
    from bench import bench_verify

    argv = ["--pages", "3", "--citations", "10", "--repeat", "2"]
    figures = run_bench(bench_verify, argv, monkeypatch, capsys)
    assert figures["citations"] == 10 and figures["verifier"]["n"] == 2
    assert figures["verifier"]["ok"] and figures["verifier"]["found"] == 10
    # the quotes cross the source's line breaks: exact search misses most of what the verifier places
    assert figures["baseline_exact_find"]["found"] < 10
    assert figures["slowdown_vs_exact_find"]["p50"] == pytest.approx(
        figures["verifier"]["p50_ms"] / figures["baseline_exact_find"]["p50_ms"], rel=0.02
    )


def test_the_demo_bench_writes_as_many_plain_pages_as_the_contract_has(monkeypatch, capsys):
    from bench import bench_demo

    figures = run_bench(bench_demo, ["--pages", "12", "--repeat", "1"], monkeypatch, capsys)
    assert figures["pages"] == 12 and figures["planted_clauses"] > 0
    assert figures["baseline_plain_fpdf2"]["pages"] >= 12
    assert figures["speedup_vs_plain_fpdf2"]["p50"] == pytest.approx(
        figures["baseline_plain_fpdf2"]["p50_ms"] / figures["generator"]["p50_ms"], rel=0.02
    )
