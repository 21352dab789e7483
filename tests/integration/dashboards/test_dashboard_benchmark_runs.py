"""Benchmark runs as tasks: evaluate then import and alert, failures recorded, a redelivered
message run once, the weekly silent-source run, and queueing from the page.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from dashboards import benchmarks
from dashboards.models import Alert, BenchmarkRun
from dashboards.tasks import refresh_dashboards, run_benchmark, weekly_silent_source
from tests.integration.dashboards.builders import fake_evaluate


@pytest.mark.django_db
def test_benchmark_task_runs_evaluate_then_imports_and_alerts(corpus, monkeypatch, caplog):
    calls = []
    monkeypatch.setattr(benchmarks, "call_command", fake_evaluate(calls))
    bset = benchmarks.import_set(corpus)
    partial = benchmarks.new_run(bset, engine="offline", limit=2, k=7)
    assert run_benchmark(partial.pk) == "3/6 pass"
    name, corpus_dir, options = calls[0]
    assert name == "evaluate" and corpus_dir == str(corpus.resolve())
    assert options["limit"] == 2 and options["k"] == 7 and options["engine"] == "offline"
    assert not Alert.objects.exists()  # a run of the first N documents raises and resolves no alert
    run = benchmarks.new_run(bset, engine="offline", k=7)
    with caplog.at_level(logging.WARNING, logger="dashboards.alerts"):
        assert run_benchmark(run.pk) == "3/6 pass"
    assert "limit" not in calls[1][2]
    run.refresh_from_db()
    assert run.status == "done" and run.started_at and run.finished_at and run.metrics["hit_rate"] == 0.5
    alerts = Alert.objects.filter(run=run, resolved_at__isnull=True)
    assert alerts.filter(kind="stratum").count() == 3
    assert alerts.filter(kind="silent").count() == 1
    assert "ALERT raised" in caplog.text and "silent source: 1/2" in caplog.text


@pytest.mark.django_db
def test_failed_benchmark_is_recorded(corpus, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("evaluate exploded")

    monkeypatch.setattr(benchmarks, "call_command", broken)
    run = benchmarks.new_run(benchmarks.import_set(corpus))
    with pytest.raises(RuntimeError):
        run_benchmark(run.pk)
    run.refresh_from_db()
    assert run.status == "failed" and "evaluate exploded" in run.error and run.finished_at


@pytest.mark.django_db
def test_a_redelivered_message_never_runs_a_benchmark_twice(corpus, monkeypatch):
    calls = []
    monkeypatch.setattr(benchmarks, "call_command", fake_evaluate(calls))
    bset = benchmarks.import_set(corpus)
    run = benchmarks.new_run(bset)
    run_benchmark(run.pk)
    assert run_benchmark(run.pk) == "skipped: done" and len(calls) == 1
    busy = benchmarks.new_run(bset)
    BenchmarkRun.objects.filter(pk=busy.pk).update(status="running", started_at=timezone.now())
    assert run_benchmark(busy.pk) == "skipped: running" and len(calls) == 1
    # A run whose worker died stays "running"; the daily refresh marks it failed once past the time limit.
    BenchmarkRun.objects.filter(pk=busy.pk).update(started_at=timezone.now() - dt.timedelta(hours=7))
    refresh_dashboards()
    busy.refresh_from_db()
    assert busy.status == "failed" and "Abandoned" in busy.error


@pytest.mark.django_db
def test_weekly_silent_source_runs_absent_pairs_only(corpus, monkeypatch, django_capture_on_commit_callbacks):
    calls = []
    monkeypatch.setattr(benchmarks, "call_command", fake_evaluate(calls))
    queued = []
    monkeypatch.setattr("dashboards.tasks.run_benchmark.delay", lambda pk: queued.append(pk))
    bset = benchmarks.import_set(corpus)
    with django_capture_on_commit_callbacks(execute=True):
        run_ids = weekly_silent_source()
    assert queued == run_ids and len(run_ids) == 1
    run = BenchmarkRun.objects.get(pk=run_ids[0])
    assert (run.scope, run.trigger, run.engine) == ("absent", "schedule", "offline")
    run_benchmark(run.pk)
    derived = Path(calls[0][1])
    assert derived != corpus and all(not json.loads(line)["present"] for line in open(derived / "gold.jsonl"))
    run.refresh_from_db()
    assert (run.n, run.silent_n, run.silent) == (2, 2, 1)
    assert Alert.objects.filter(run=run, kind="silent").exists()
    assert not Alert.objects.filter(run=run, kind="stratum").exists()  # absent-only runs judge silence only
    # A set with a run in progress is not queued twice.
    BenchmarkRun.objects.create(benchmark_set=bset, status="running")
    assert weekly_silent_source() == []


@pytest.mark.django_db
def test_ui_queues_a_benchmark_run_on_commit(
    client, people, corpus, monkeypatch, django_capture_on_commit_callbacks
):
    queued = []
    monkeypatch.setattr("dashboards.tasks.run_benchmark.delay", lambda pk: queued.append(pk))
    bset = benchmarks.import_set(corpus)
    client.force_login(people["manager"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("dashboards:benchmark-run"),
            {"benchmark_set": bset.pk, "scope": "all", "engine": "offline", "limit": 1, "k": 5},
        )
    run = BenchmarkRun.objects.get()
    assert response.status_code == 302 and response.url == reverse("dashboards:run", args=[run.pk])
    assert queued == [run.pk] and (run.limit, run.created_by, run.trigger) == (1, people["manager"], "ui")
    page = client.get(reverse("dashboards:benchmarks")).content.decode()
    assert 'hx-trigger="every 3s"' in page  # the runs table polls while a run is queued
    rows = client.get(reverse("dashboards:runs-rows")).content.decode()
    assert rows.lstrip().startswith('<tbody id="runs-rows"') and f"#{run.pk}" in rows and "queued" in rows
    BenchmarkRun.objects.filter(pk=run.pk).update(status="failed", error="boom")
    rows = client.get(reverse("dashboards:runs-rows")).content.decode()
    assert "hx-trigger" not in rows and "boom" in rows  # polling stops once nothing is in flight


@pytest.mark.django_db
def test_a_broker_that_is_down_fails_the_run_not_the_page(
    client, people, corpus, monkeypatch, django_capture_on_commit_callbacks
):
    from kombu.exceptions import OperationalError

    def broker_down(pk):
        raise OperationalError("Error 111 connecting to localhost:6379. Connection refused.")

    monkeypatch.setattr("dashboards.tasks.run_benchmark.delay", broker_down)
    bset = benchmarks.import_set(corpus)
    client.force_login(people["manager"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("dashboards:benchmark-run"),
            {"benchmark_set": bset.pk, "scope": "all", "engine": "offline", "k": 5},
        )
    run = BenchmarkRun.objects.get()
    assert response.status_code == 302 and response.url == reverse("dashboards:run", args=[run.pk])
    assert run.status == "failed" and "could not be queued" in run.error and "Connection refused" in run.error


@pytest.mark.django_db
def test_a_run_stuck_queued_no_longer_blocks_the_weekly_silent_source_run(
    corpus, monkeypatch, django_capture_on_commit_callbacks
):
    queued = []
    monkeypatch.setattr("dashboards.tasks.run_benchmark.delay", lambda pk: queued.append(pk))
    bset = benchmarks.import_set(corpus)
    stuck = benchmarks.new_run(bset)  # its message was lost: no worker will ever claim it
    recent = benchmarks.new_run(bset)
    BenchmarkRun.objects.filter(pk=stuck.pk).update(created_at=timezone.now() - dt.timedelta(days=2))
    assert benchmarks.fail_abandoned_runs() == 1
    stuck.refresh_from_db(), recent.refresh_from_db()
    assert stuck.status == "failed" and "still queued" in stuck.error and recent.status == "queued"

    BenchmarkRun.objects.filter(pk=recent.pk).update(created_at=timezone.now() - dt.timedelta(days=2))
    with django_capture_on_commit_callbacks(execute=True):
        run_ids = weekly_silent_source()  # marks the stale run failed, then queues this week's run
    recent.refresh_from_db()
    assert recent.status == "failed" and len(run_ids) == 1 and queued == run_ids
