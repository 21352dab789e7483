"""Figures over time: benchmark runs of a set, and the reviewer figures of the daily snapshots."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from dashboards import charts, conf
from dashboards.models import BenchmarkRun, DashboardSnapshot
from extraction.evaluation import stratify

TREND_DAYS = 90


def benchmark_trend(benchmark_set, filters=None, limit: int = 30, width: int = 640) -> dict:
    """Finished runs of one set, oldest first: pass rate on present pairs (all-pairs runs) and silent source.
    A run limited to the first N documents is drawn too, and its point's title says so."""
    qs = benchmark_set.runs.filter(status=BenchmarkRun.Status.DONE)
    if filters is not None:
        qs = qs.filter(filters.date_range("finished_at"))
        if filters.engine:
            qs = qs.filter(engine=filters.engine)
        if filters.model:
            qs = qs.filter(model=filters.model)
    runs = list(qs.order_by("-finished_at", "-id")[:limit])[::-1]
    categories = [f"#{r.pk} {r.finished_at:%d %b}" for r in runs]
    partial = [f" (first {r.limit} documents)" if r.limit else "" for r in runs]
    hit = [r.hit_rate if r.scope == BenchmarkRun.Scope.ALL else None for r in runs]
    silent = [r.silent_rate for r in runs]
    chart = (
        charts.line_chart(
            categories,
            [
                {
                    "name": "Pass rate, present pairs",
                    "cls": "series-a",
                    "values": hit,
                    "titles": [
                        f"run #{r.pk}{p} ({r.engine} {r.model}): "
                        f"{r.present_passes}/{r.present_n} present pairs pass "
                        f"({charts.pct(r.hit_rate)})"
                        for r, p in zip(runs, partial)
                    ],
                },
                {
                    "name": "Silent source",
                    "cls": "series-b",
                    "values": silent,
                    "titles": [
                        f"run #{r.pk}{p}: {r.silent}/{r.silent_n} absent pairs not_found "
                        f"({charts.pct(r.silent_rate)})"
                        for r, p in zip(runs, partial)
                    ],
                },
            ],
            targets=_targets(),
            width=width,
        )
        if runs
        else None
    )
    return {"set": benchmark_set, "runs": runs, "chart": chart, "chart_id": f"trend-bench-{benchmark_set.pk}"}


def _targets():
    pass_target, silent_target = float(conf.get("TARGET_PASS_RATE")), float(conf.get("TARGET_SILENT_SOURCE"))
    return [
        (pass_target, f"target {charts.pct(pass_target)}"),
        (silent_target, f"target {charts.pct(silent_target)}"),
    ]


def reviewer_trend(engagement_ids, days: int = TREND_DAYS) -> dict:
    """Reviewer pass rate and silent-source rate per day from the snapshots (latest per engagement per day).
    A snapshot holds every review to date, so each point is a running total, not that day's reviews."""
    since = timezone.now() - dt.timedelta(days=days)
    latest: dict[tuple, DashboardSnapshot] = {}
    for snap in DashboardSnapshot.objects.filter(
        engagement_id__in=engagement_ids, computed_at__gte=since
    ).order_by("computed_at", "id"):
        latest[(snap.computed_at.date(), snap.engagement_id)] = snap
    by_day: dict[dt.date, list] = {}
    for (day, _), snap in sorted(latest.items()):
        by_day.setdefault(day, []).append(snap.figures)
    points = []
    for day, parts in sorted(by_day.items()):
        n = sum(s["n"] for p in parts for s in p["strata"])
        passes = sum(s["passes"] for p in parts for s in p["strata"])
        silent_n = sum(p["silent"]["n"] for p in parts)
        silent = sum(p["silent"]["silent"] for p in parts)
        points.append(
            {
                "day": day,
                "n": n,
                "passes": passes,
                "rate": stratify.pass_rate(passes, n),
                "silent_n": silent_n,
                "silent": silent,
                "silent_rate": stratify.pass_rate(silent, silent_n),
                "engagements": len(parts),
            }
        )
    chart = (
        charts.line_chart(
            [f"{p['day']:%d %b}" for p in points],
            [
                {
                    "name": "Reviewer pass rate",
                    "cls": "series-a",
                    "values": [p["rate"] for p in points],
                    "titles": [
                        f"{p['day']:%d %b}: {p['passes']}/{p['n']} accepted to date ({charts.pct(p['rate'])})"
                        for p in points
                    ],
                },
                {
                    "name": "Silent source",
                    "cls": "series-b",
                    "values": [p["silent_rate"] for p in points],
                    "titles": [
                        f"{p['day']:%d %b}: {p['silent']}/{p['silent_n']} not_found "
                        f"({charts.pct(p['silent_rate'])})"
                        for p in points
                    ],
                },
            ],
            targets=_targets(),
        )
        if points
        else None
    )
    return {"points": points, "chart": chart}
