"""Raising and resolving alerts: a stratum under its target, or a silent-source rate under its target.

One open Alert per subject (kind, source, engagement or benchmark set, stratum key). A check that
no longer finds the problem resolves the open alert. Every raise and resolve is logged.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from dashboards import conf
from dashboards.charts import bound_pct, pct
from dashboards.figures import run_silent, run_strata
from dashboards.models import Alert, BenchmarkRun
from extraction.evaluation import stratify

log = logging.getLogger("dashboards.alerts")


def stratum_key(s: stratify.Stratum) -> str:
    return "|".join(s.key)


def describe_stratum(s: stratify.Stratum) -> str:
    return (
        f"{s.doc_type or 'unclassified'} · {s.clause_type} · {s.section_label}: {s.passes}/{s.n} pass "
        f"({pct(s.rate)}, 95% CI {bound_pct(s.low)}–{bound_pct(s.high)}), target {pct(s.target)}"
    )


def describe_silent(s: stratify.SilentSource) -> str:
    low, high = s.interval
    return (
        f"silent source: {s.silent}/{s.n} known-absent pairs answered not_found ({pct(s.rate)}, "
        f"95% CI {bound_pct(low)}–{bound_pct(high)}), {len(s.invented)} invented, target {pct(s.target)}"
    )


def _findings(strata, silent, kinds, min_n):
    found = {}
    if Alert.Kind.STRATUM in kinds:
        for s in stratify.below_target(strata, min_n):
            found[(Alert.Kind.STRATUM, stratum_key(s))] = (describe_stratum(s), s.n, s.passes, s.target)
    if Alert.Kind.SILENT_SOURCE in kinds and silent is not None and silent.below_target:
        found[(Alert.Kind.SILENT_SOURCE, "silent")] = (
            describe_silent(silent),
            silent.n,
            silent.silent,
            silent.target,
        )
    return found


@transaction.atomic
def sync(
    *,
    source: str,
    strata,
    silent,
    engagement=None,
    benchmark_set=None,
    run=None,
    kinds=(Alert.Kind.STRATUM, Alert.Kind.SILENT_SOURCE),
    label: str = "",
) -> list[Alert]:
    """Make the open alerts of one subject match what a check just measured; returns the open ones."""
    now = timezone.now()
    findings = _findings(strata, silent, kinds, int(conf.get("ALERT_MIN_N")))
    subject = {"source": source, "engagement": engagement, "benchmark_set": benchmark_set}
    open_alerts = {
        (a.kind, a.key): a
        for a in Alert.objects.select_for_update().filter(resolved_at__isnull=True, kind__in=kinds, **subject)
    }
    kept = []
    for (kind, key), (message, n, passes, threshold) in findings.items():
        alert = open_alerts.pop((kind, key), None)
        message = message[:600]
        if alert is None:
            alert = Alert.objects.create(
                kind=kind,
                key=key[:400],
                subject=label[:300],
                message=message,
                n=n,
                passes=passes,
                threshold=threshold,
                last_seen_at=now,
                run=run,
                **subject,
            )
            log.warning("ALERT raised: %s", alert)
        else:
            alert.subject, alert.message, alert.n, alert.passes = label[:300], message, n, passes
            alert.threshold, alert.last_seen_at, alert.run = threshold, now, run or alert.run
            alert.save(
                update_fields=["subject", "message", "n", "passes", "threshold", "last_seen_at", "run"]
            )
        kept.append(alert)
    for alert in open_alerts.values():
        alert.resolved_at = now
        alert.save(update_fields=["resolved_at"])
        log.info("alert resolved: %s", alert)
    return kept


def sync_reviewer_alerts(engagement, figures) -> list[Alert]:
    """figures: a ReviewerFigures of this one engagement."""
    return sync(
        source=Alert.Source.REVIEWS,
        strata=figures.strata,
        silent=figures.silent,
        engagement=engagement,
        label=f"Reviews · {engagement.name}",
    )


def sync_benchmark_alerts(run: BenchmarkRun) -> list[Alert]:
    """Raise and resolve the set's benchmark alerts from a finished full run. A run limited to the first N
    documents leaves them as they are: it never measured the other documents, so it may not resolve what
    they showed (and the dashboard's figures leave it out too)."""
    if run.limit:
        log.info(
            "benchmark run %s covers the first %d documents only: alerts left as they are", run.pk, run.limit
        )
        return []

    kinds = (
        (Alert.Kind.SILENT_SOURCE,)
        if run.scope == BenchmarkRun.Scope.ABSENT
        else (Alert.Kind.STRATUM, Alert.Kind.SILENT_SOURCE)
    )
    return sync(
        source=Alert.Source.BENCHMARK,
        strata=run_strata(run),
        silent=run_silent(run),
        benchmark_set=run.benchmark_set,
        engagement=run.benchmark_set.engagement,
        run=run,
        kinds=kinds,
        label=f"Benchmark · {run.benchmark_set.name} run #{run.pk}",
    )
