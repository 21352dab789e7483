"""``make run``'s demo seeding: the demo benchmark set gives managers measured figures from the first start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from dashboards.models import BenchmarkOutcome, BenchmarkRun, BenchmarkSet
from dashboards.tasks import run_benchmark
from reviewer.management.commands.seed_demo import DEMO_BENCHMARK, DEMO_ENGAGEMENT

pytestmark = pytest.mark.django_db


def _seed(capture):
    with capture(execute=True):  # run what seed_demo queues on commit (here: record the task's id)
        call_command("seed_demo", "--extract", "--wait-seconds", "0")


def test_demo_benchmark_runs_once_for_the_demo_engagement_and_scores_every_pair(
    settings, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    settings.BASE_DIR = tmp_path  # the demo corpus is written under var/
    settings.DASHBOARDS = {"BENCHMARK_ENGINE": "anthropic"}  # a deployment's default for its own runs
    monkeypatch.setenv("DEMO_PASSWORD", "demo-password-for-tests")
    queued: list[int] = []
    monkeypatch.setattr("dashboards.tasks.run_benchmark.delay", queued.append)

    _seed(django_capture_on_commit_callbacks)
    benchmark_set = BenchmarkSet.objects.get(name=DEMO_BENCHMARK)
    assert benchmark_set.engagement.name == DEMO_ENGAGEMENT  # the demo manager sees it
    assert benchmark_set.credit == ""  # synthetic contracts: no CUAD credit claimed
    assert Path(benchmark_set.path) == (tmp_path / "var" / "demo-benchmark").resolve()
    assert len(queued) == 1

    assert run_benchmark(queued[0]).endswith(f"/{benchmark_set.pair_count} pass")  # real evaluate, in process
    run = BenchmarkRun.objects.get(pk=queued[0])
    assert (
        run.status == BenchmarkRun.Status.DONE and run.engine == "offline"
    )  # no API credit spent at start-up
    outcomes = BenchmarkOutcome.objects.filter(run=run)
    assert outcomes.count() == benchmark_set.pair_count == 82
    assert outcomes.filter(present=False).count() == benchmark_set.absent_count
    metrics = json.loads((Path(run.out_dir) / "eval" / "metrics.json").read_text())
    assert metrics["credit"] == ""
    # Dates and parties are labelled as the mention (as in CUAD): the offline engine's date passes.
    assert list(outcomes.filter(clause_type="Agreement Date").values_list("passed", flat=True)) == [
        True,
        True,
    ]

    _seed(django_capture_on_commit_callbacks)  # make run again: same gold, no second run
    assert len(queued) == 1 and benchmark_set.runs.count() == 1
