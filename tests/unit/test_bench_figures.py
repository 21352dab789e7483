"""The figures the benchmarks in bench/ print: percentiles, and how run_all reads a bench's output."""

from __future__ import annotations

from bench._django import percentiles


def test_percentiles_are_nearest_rank():
    # nearest rank: the ceil(q * n)-th smallest sample
    assert percentiles([float(i) for i in range(1, 101)]) == {
        "p50_ms": 50.0,
        "p95_ms": 95.0,
        "max_ms": 100.0,
        "n": 100,
    }
    assert percentiles([float(i) for i in range(1, 11)])["p50_ms"] == 5.0


def test_p95_of_twenty_samples_is_not_the_maximum():
    figures = percentiles([float(i) for i in range(1, 21)])
    assert figures["p95_ms"] == 19.0
    assert figures["max_ms"] == 20.0


def test_percentiles_of_few_samples():
    assert percentiles([7.0]) == {"p50_ms": 7.0, "p95_ms": 7.0, "max_ms": 7.0, "n": 1}
    assert percentiles([3.0, 1.0, 2.0]) == {"p50_ms": 2.0, "p95_ms": 3.0, "max_ms": 3.0, "n": 3}


def test_review_fragment_counts_each_failed_click_once():
    from bench.bench_review_fragment import scenario

    # 10 clicks, 4 answered 404: the load process saw 4, the access log logged the same 4
    client = {
        "latencies": [20.0] * 10,
        "errors": 4,
        "elapsed_s": 2.0,
        "view_ms": [5.0] * 10,
        "cpu_ms": [3.0] * 10,
    }
    figures = scenario(0, client, [8.0] * 10, 4)
    assert figures["requests"] == 10
    assert figures["errors"] == 4
    assert figures["server_errors"] == 4
    assert figures["throughput_rps"] == 5.0
    assert figures["meets_target"] is True


def test_run_all_keeps_every_section_a_bench_printed():
    from bench.run_all import read_output

    # bench_bulk prints one object per section as it ends it
    out = (
        '{\n  "build": {"requests": 10}\n}\n{\n  "harvest": {"lines": 200}\n}\n'
        '{"project": {"dedicated_hours": 5.1}}\n'
    )
    assert read_output(out) == {
        "build": {"requests": 10},
        "harvest": {"lines": 200},
        "project": {"dedicated_hours": 5.1},
    }


def test_run_all_reads_one_object_after_a_progress_line():
    from bench.run_all import read_output

    assert read_output('warming up {model}\n{"bench": "search", "k": 5}\n') == {"bench": "search", "k": 5}
    assert read_output("Traceback (most recent call last):\n") == {}


def test_bulk_cuad_section_without_the_corpus_says_so(tmp_path, monkeypatch):
    import bench.bench_bulk as bulk

    monkeypatch.setattr(bulk, "CUAD", tmp_path / "cuad-dev")
    skipped = bulk.bench_cuad([1], 1)["skipped"]
    assert skipped == f"no corpus at {tmp_path / 'cuad-dev'} (the cuad-dev folder, see README.md)"


def test_quick_run_gives_every_bench_small_sizes():
    from bench.run_all import QUICK_ARGS, modules

    assert set(modules()) <= set(QUICK_ARGS)
    assert not any("--no-baseline" in args for args in QUICK_ARGS.values())  # a ratio needs its baseline


def test_ratio_against_a_baseline():
    from bench._django import ratio

    assert ratio(8.0, 2.0) == 4.0
    assert ratio(1.0, 3.0) == 0.33
    assert ratio(1.0, 3.0, digits=3) == 0.333
    assert ratio(5.0, 0.0) is None  # nothing to divide by: no ratio rather than a crash or infinity
    assert ratio(None, 2.0) is None


def test_speedup_is_baseline_time_over_ours():
    from bench._django import speedup

    exact = {"p50_ms": 8.0, "p95_ms": 12.0, "max_ms": 20.0, "n": 30, "cpu_p50_ms": 4.0, "cpu_p95_ms": 6.0}
    hnsw = {"p50_ms": 2.0, "p95_ms": 4.0, "max_ms": 9.0, "n": 30, "cpu_p50_ms": 1.0, "cpu_p95_ms": 3.0}
    assert speedup(exact, hnsw) == {"p50": 4.0, "p95": 3.0, "cpu_p50": 4.0, "cpu_p95": 2.0}
    # CPU figures only where both sides could read them (a remote database has none)
    assert speedup({"p50_ms": 8.0, "p95_ms": 12.0}, hnsw) == {"p50": 4.0, "p95": 3.0}


def test_naive_verify_baseline_is_a_whitespace_normalised_substring_test():
    from bench.bench_extraction import naive_verify
    from ingest.chunker import ChunkSpec

    chunk = ChunkSpec("c1", 0, "The Supplier shall pay\n\nwithin  thirty days.", 0, 44, 1, 1, 0, "")
    chunks = {"c1": chunk}
    assert naive_verify({"chunk_id": "c1", "quote": "shall pay within thirty"}, chunks)
    assert not naive_verify({"chunk_id": "c1", "quote": "shall pay within sixty"}, chunks)
    assert not naive_verify({"chunk_id": "c9", "quote": "shall pay"}, chunks)  # a chunk it never read


def test_review_fragment_slowdown_is_fragment_time_over_the_login_page():
    from bench.bench_review_fragment import load_figures, slowdown_vs_baseline

    fragment = load_figures(
        {"latencies": [30.0] * 10, "errors": 0, "elapsed_s": 1.0}, [12.0] * 18 + [15.0] * 2, 0
    )
    login = load_figures({"latencies": [10.0] * 20, "errors": 0, "elapsed_s": 1.0}, [3.0] * 20, 0)
    assert slowdown_vs_baseline(fragment, login) == {
        "server_p50": 4.0,
        "server_p95": 5.0,
        "client_p50": 3.0,
        "client_p95": 3.0,
    }
