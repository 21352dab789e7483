"""Celery tasks (thin): refresh the cached figures daily, run benchmarks, the weekly silent-source run.

``queue_benchmark`` queues ``run_benchmark``; the receiver in ``dashboards.signals`` calls it when
``dashboards.benchmarks.enqueue`` says a run is queued (services never import this module)."""

from __future__ import annotations

import logging
from functools import partial

from celery import shared_task
from django.db import transaction

from dashboards import benchmarks, conf
from dashboards.alerts import sync_reviewer_alerts
from dashboards.figures import combine, take_snapshot
from dashboards.models import BenchmarkRun, BenchmarkSet
from engagements.models import Engagement

log = logging.getLogger(__name__)


@shared_task(acks_late=True)
def refresh_dashboards(engagement_id: int | None = None) -> int:
    """Recompute each engagement's reviewer figures into a DashboardSnapshot and raise/resolve alerts."""
    engagements = Engagement.objects.all()
    if engagement_id is not None:
        engagements = engagements.filter(pk=engagement_id)
    count = 0
    benchmarks.fail_abandoned_runs()
    for engagement in engagements:
        snapshot = take_snapshot(engagement)
        sync_reviewer_alerts(engagement, combine([snapshot.figures], as_of=snapshot.computed_at))
        count += 1
    log.info("dashboard figures refreshed for %d engagement(s)", count)
    return count


@shared_task(
    acks_late=True,
    time_limit=int(conf.get("BENCHMARK_TIME_LIMIT")),
    soft_time_limit=int(conf.get("BENCHMARK_TIME_LIMIT")) - 60,
)
def run_benchmark(run_id: int) -> str:
    """Run ``evaluate`` for one BenchmarkRun and import its predictions (the run row records the outcome)."""
    run = BenchmarkRun.objects.select_related("benchmark_set").get(pk=run_id)
    try:
        benchmarks.execute(run)
    except benchmarks.AlreadyClaimed as exc:
        log.info("%s; nothing to do", exc)
        return f"skipped: {run.status}"
    return f"{run.passes}/{run.n} pass"


@shared_task(acks_late=True)
def weekly_silent_source() -> list[int]:
    """Queue the silent-source benchmark (absent pairs only) on every set that asks for it, except sets with
    a run in progress (runs abandoned while queued or running are marked failed first, so they never block
    it)."""
    benchmarks.fail_abandoned_runs()
    queued = []
    for benchmark_set in BenchmarkSet.objects.filter(weekly_silent_source=True):
        if benchmark_set.runs.filter(
            status__in=[BenchmarkRun.Status.QUEUED, BenchmarkRun.Status.RUNNING]
        ).exists():
            log.info("silent-source run for %s skipped: a run is already in progress", benchmark_set)
            continue
        with transaction.atomic():
            run = benchmarks.new_run(
                benchmark_set,
                scope=BenchmarkRun.Scope.ABSENT,
                trigger=BenchmarkRun.Trigger.SCHEDULE,
                limit=conf.get("SILENT_SOURCE_LIMIT"),
            )
            benchmarks.enqueue(run)
        queued.append(run.pk)
    return queued


def queue_refresh(engagement_ids) -> None:
    """Refresh the figures of each of ``engagement_ids`` on a worker once the request's transaction
    commits."""
    for pk in engagement_ids:
        transaction.on_commit(partial(refresh_dashboards.delay, pk))


def queue_benchmark(run_id: int) -> None:
    """Ask a worker to run the benchmark run; a broker that is down fails the run (``benchmarks.not_queued``)
    rather than the request that queued it, whose transaction has committed."""
    try:
        run_benchmark.delay(run_id)
    except Exception as exc:
        benchmarks.not_queued(run_id, exc)
