"""Dashboard pages (thin: check access, load figures, render).

Managers and admins only; every figure is limited to the engagements they manage
(plus shared benchmark corpora, which hold no client data).
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse

from config.params import id_param
from dashboards import benchmarks, charts, conf, trends
from dashboards.access import is_admin_somewhere, require_dashboard_access, require_engagement
from dashboards.corpus import CorpusError
from dashboards.figures import (
    Filters,
    benchmark_figures,
    reviewer_figures,
    run_silent,
    run_strata,
    side_by_side,
    visible_sets,
)
from dashboards.forms import FilterForm, ImportSetForm, RunForm
from dashboards.models import Alert, BenchmarkRun
from dashboards.tasks import queue_refresh
from extraction.evaluation.stratify import Stratum, below_target, totals
from extraction.models import Extraction
from reviewer.posting import post_only

TABLE_ROWS = 60
ALERTS_SHOWN = 12
FILTER_KEYS = ("engagement", "date_from", "date_to", "engine", "model")


def _choices(engagement_ids, sets):
    extractions = Extraction.objects.filter(document__engagement_id__in=engagement_ids)
    runs = BenchmarkRun.objects.filter(benchmark_set__in=sets)
    engines = set(extractions.values_list("engine", flat=True).distinct()) | set(
        runs.values_list("engine", flat=True).distinct()
    )
    models = set(extractions.values_list("model", flat=True).distinct()) | set(
        runs.values_list("model", flat=True).distinct()
    )
    return sorted(engines - {""}), sorted(models - {""})


def _filters(request, managed):
    """(form, Filters) from the query string; asking for an engagement goes through require_role."""
    raw = request.GET.get("engagement", "")
    if raw:
        asked = id_param(raw)
        if asked is None:
            raise Http404("No engagement matches the given query.")
        require_engagement(request.user, asked)  # a 404 unless the user may see it
    ids = [e.pk for e in managed]
    engines, models = _choices(ids, visible_sets(ids))
    form = FilterForm(request.GET or None, engagements=managed, engines=engines, models=models)
    data = {}
    if form.is_bound:  # the valid fields apply; a bad one is shown with its error, never widens the view
        form.is_valid()
        data = dict(form.cleaned_data)
        if form.non_field_errors():  # the dates contradict each other
            data["date_from"] = data["date_to"] = None
    filters = Filters(
        engagement_ids=[data["engagement"]] if data.get("engagement") else ids,
        date_from=data.get("date_from"),
        date_to=data.get("date_to"),
        engine=data.get("engine") or "",
        model=data.get("model") or "",
    )
    return form, filters


def _open_alerts(engagement_ids):
    sets = visible_sets(engagement_ids)
    return (
        Alert.objects.filter(resolved_at__isnull=True)
        .filter(Q(engagement_id__in=engagement_ids) | Q(engagement__isnull=True, benchmark_set__in=sets))
        .select_related("engagement", "benchmark_set")
    )


def dashboard(request):
    managed = require_dashboard_access(request.user)
    form, filters = _filters(request, managed)
    reviewer = reviewer_figures(filters)
    bench = benchmark_figures(filters)
    pairs = side_by_side(reviewer.strata, bench.strata)
    show_all = request.GET.get("all") == "1"
    query = {k: request.GET[k] for k in FILTER_KEYS if request.GET.get(k)}
    open_alerts = _open_alerts(filters.engagement_ids)
    sets = visible_sets(filters.engagement_ids)
    below_reviews, below_bench = below_target(reviewer.strata, 1), below_target(bench.strata, 1)
    context = {
        "form": form,
        "filters": filters,
        "query": urlencode(query),
        "reviewer": reviewer,
        "bench": bench,
        "reviewer_total": _total(reviewer.strata),
        "bench_total": _total(bench.strata),
        "pairs": pairs if show_all else pairs[:TABLE_ROWS],
        "pair_count": len(pairs),
        "show_all": show_all,
        "heatmap": charts.heatmap(pairs, int(conf.get("HEATMAP_ROWS"))) if pairs else None,
        "alerts_reviews": below_reviews,
        "alerts_bench": below_bench,
        "alerts_shown": ALERTS_SHOWN,
        "more_reviews": max(0, len(below_reviews) - ALERTS_SHOWN),
        "more_bench": max(0, len(below_bench) - ALERTS_SHOWN),
        "open_alerts": open_alerts[:ALERTS_SHOWN],
        "open_alert_count": open_alerts.count(),
        "reviewer_trend": trends.reviewer_trend(filters.engagement_ids),
        "bench_trends": [
            trends.benchmark_trend(s, filters) for s in sets.filter(runs__status="done").distinct()[:3]
        ],
        "target": float(conf.get("TARGET_PASS_RATE")),
        "silent_target": float(conf.get("TARGET_SILENT_SOURCE")),
        "bounds": conf.bounds(),
    }
    return render(request, "dashboards/dashboard.html", context)


def _total(strata) -> Stratum:
    """All strata of one source added up (the headline figure)."""
    n, passes = totals(strata)
    return Stratum("all", "all", "all", n=n, passes=passes, target=float(conf.get("TARGET_PASS_RATE")))


@post_only("dashboards:index")  # a GET (signed in again after the session expired) goes back
def refresh(request):
    """Recompute the cached figures now (on a worker) for the chosen engagement or all managed ones."""
    managed = require_dashboard_access(request.user)
    raw = request.POST.get("engagement", "")
    chosen = id_param(raw)
    targets = [require_engagement(request.user, chosen)] if chosen is not None else managed
    queue_refresh([engagement.pk for engagement in targets])
    messages.info(request, "Refresh queued: the figures update within a minute.")
    return redirect(reverse("dashboards:index") + (f"?engagement={chosen}" if chosen is not None else ""))


# --------------------------------------------------------------------------- benchmarks
def benchmark_list(request):
    managed = require_dashboard_access(request.user)
    ids = [e.pk for e in managed]
    sets = visible_sets(ids)
    admin_engagements = [e for e in managed if e.memberships.filter(user=request.user, role="admin").exists()]
    runs = list(_runs_for(sets)[:50])
    context = {
        "sets": sets,
        "runs": runs,
        "any_active": any(r.is_active for r in runs),
        "run_form": RunForm(sets=sets),
        "import_form": ImportSetForm(engagements=admin_engagements)
        if is_admin_somewhere(request.user)
        else None,
        "trends": [trends.benchmark_trend(s, width=1000) for s in sets],
        "credits": sorted({s.credit for s in sets if s.credit}),
    }
    return render(request, "dashboards/benchmarks.html", context)


def _runs_for(sets):
    return BenchmarkRun.objects.filter(benchmark_set__in=sets).select_related("benchmark_set", "created_by")


def runs_fragment(request):
    """The runs table body, polled by htmx while a run is queued or running."""
    managed = require_dashboard_access(request.user)
    sets = visible_sets([e.pk for e in managed])
    runs = list(_runs_for(sets)[:50])
    return render(
        request, "dashboards/_runs_rows.html", {"runs": runs, "any_active": any(r.is_active for r in runs)}
    )


@post_only("dashboards:benchmarks")
def benchmark_run(request):
    managed = require_dashboard_access(request.user)
    sets = visible_sets([e.pk for e in managed])
    form = RunForm(request.POST, sets=sets)
    if not form.is_valid():
        messages.error(
            request,
            "Run not started: "
            + "; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items()),
        )
        return redirect("dashboards:benchmarks")
    data = form.cleaned_data
    with transaction.atomic():
        run = benchmarks.new_run(
            data["benchmark_set"],
            engine=data["engine"],
            scope=data["scope"],
            trigger=BenchmarkRun.Trigger.UI,
            limit=data["limit"],
            k=data["k"],
            user=request.user,
        )
        benchmarks.enqueue(run)
    messages.info(request, f"Benchmark run #{run.pk} queued.")
    return redirect("dashboards:run", run_id=run.pk)


@post_only("dashboards:benchmarks")
def benchmark_import(request):
    managed = require_dashboard_access(request.user)
    if not is_admin_somewhere(request.user):
        raise PermissionDenied("Importing a corpus needs the admin role.")
    admin_engagements = [e for e in managed if e.memberships.filter(user=request.user, role="admin").exists()]
    form = ImportSetForm(request.POST, engagements=admin_engagements)
    if form.is_valid():
        data = form.cleaned_data
        engagement = next((e for e in admin_engagements if e.pk == data["engagement"]), None)
        try:
            benchmark_set = benchmarks.import_set(
                data["path"],
                data["name"],
                engagement=engagement,
                user=request.user,
                weekly_silent_source=data["weekly_silent_source"],
            )
        except (CorpusError, benchmarks.ImportRefused) as exc:
            messages.error(request, f"Not imported: {exc}")
        else:
            messages.info(
                request,
                f"Benchmark set {benchmark_set.name} imported: {benchmark_set.document_count} "
                f"documents, {benchmark_set.pair_count} pairs ({benchmark_set.absent_count} absent).",
            )
    else:
        messages.error(request, "Not imported: " + "; ".join(" ".join(e) for e in form.errors.values()))
    return redirect("dashboards:benchmarks")


def run_detail(request, run_id: int):
    managed = require_dashboard_access(request.user)
    sets = visible_sets([e.pk for e in managed])
    run = (
        BenchmarkRun.objects.filter(pk=run_id, benchmark_set__in=sets).select_related("benchmark_set").first()
    )
    if run is None:
        raise Http404("No benchmark run matches the given query.")
    strata = run_strata(run) if run.status == BenchmarkRun.Status.DONE else []
    silent = run_silent(run) if run.status == BenchmarkRun.Status.DONE else None
    show_all = request.GET.get("all") == "1"
    metrics = {
        k: v for k, v in run.metrics.items() if isinstance(v, (int, float, str)) and not isinstance(v, bool)
    }
    return render(
        request,
        "dashboards/run.html",
        {
            "run": run,
            "strata": strata if show_all else strata[:TABLE_ROWS],
            "strata_count": len(strata),
            "show_all": show_all,
            "silent": silent,
            "metrics": metrics,
            "imported": run.metrics.get("import", {}),
            "below": below_target(strata, 1),
            "target": float(conf.get("TARGET_PASS_RATE")),
        },
    )


def alert_log(request):
    managed = require_dashboard_access(request.user)
    ids = [e.pk for e in managed]
    sets = visible_sets(ids)
    alerts = Alert.objects.filter(
        Q(engagement_id__in=ids) | Q(engagement__isnull=True, benchmark_set__in=sets)
    ).select_related("engagement", "benchmark_set", "run")
    state = request.GET.get("state", "open")
    if state == "open":
        alerts = alerts.filter(resolved_at__isnull=True)
    return render(request, "dashboards/alerts.html", {"alerts": alerts[:500], "state": state})
