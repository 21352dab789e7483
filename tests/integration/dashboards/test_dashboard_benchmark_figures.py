"""Benchmark figures: strata and silent source of the latest full run, partial runs, pairs
that never ran, one corpus under two names, the run page and its trend.
"""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from dashboards import benchmarks
from dashboards.figures import benchmark_figures
from dashboards.models import Alert
from tests.integration.dashboards.builders import (
    CUAD,
    EXPECTED_BENCH,
    PREDICTIONS,
    everything,
    predicted,
    table,
    write_predictions,
)


@pytest.mark.django_db
def test_benchmark_strata_and_silent_source(engagement, imported_run):
    figures = benchmark_figures(everything(engagement))
    assert table(figures.strata) == EXPECTED_BENCH
    assert (figures.silent.silent, figures.silent.n) == (1, 2)
    assert [(i["doc"], i["clause_type"]) for i in figures.silent.invented] == [("d2", "Cap On Liability")]
    assert figures.credits == [CUAD]
    assert benchmark_figures(everything(engagement, engine="anthropic")).strata == []


@pytest.mark.django_db
def test_a_partial_run_neither_replaces_the_full_figures_nor_closes_alerts(
    client, engagement, people, imported_run, tmp_path
):
    opened = set(Alert.objects.filter(resolved_at__isnull=True).values_list("pk", flat=True))
    assert len(opened) == 4  # 3 strata and the silent source, from the full run
    # "First 1 documents": only d1 is answered (its strata pass or fail as before; d2's go unmeasured).
    out = tmp_path / "first-1"
    out.mkdir()
    (out / "predictions.jsonl").write_text(
        "".join(json.dumps(p) + "\n" for p in PREDICTIONS if p["doc"] == "d1")
    )
    partial = benchmarks.import_existing(
        benchmarks.new_run(imported_run.benchmark_set, limit=1, trigger="import"), out
    )
    assert (partial.n, partial.silent_n, partial.silent) == (4, 1, 1)

    figures = benchmark_figures(everything(engagement))
    assert table(figures.strata) == EXPECTED_BENCH and (figures.silent.silent, figures.silent.n) == (1, 2)
    assert [r.pk for r in figures.runs] == [imported_run.pk] and [r.pk for r in figures.silent_runs] == [
        imported_run.pk
    ]
    assert set(Alert.objects.filter(resolved_at__isnull=True).values_list("pk", flat=True)) == opened
    client.force_login(people["manager"])
    page = client.get(reverse("dashboards:index")).content.decode()
    assert (
        f'<a href="/dashboards/benchmarks/runs/{partial.pk}/">#{partial.pk}</a>' in page
        and "first 1 documents" in page.split(f"#{partial.pk}</a>", 1)[1].split("</tr>", 1)[0]
    )


@pytest.mark.django_db
def test_pairs_that_never_ran_are_not_run_not_invented(client, engagement, people, corpus, tmp_path):
    # d2 is a scanned PDF that never became ready: evaluate writes "failed" for its pairs.
    out = tmp_path / "failed"
    out.mkdir()
    lines = PREDICTIONS + [predicted("d2", "Termination For Convenience", "failed")]
    (out / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in lines))
    run = benchmarks.import_existing(benchmarks.new_run(benchmarks.import_set(corpus), trigger="import"), out)

    assert (run.silent_n, run.silent) == (2, 1)  # the failed pair is left out of the silent-source rate
    silent = benchmark_figures(everything(engagement)).silent
    assert (silent.silent, silent.n) == (1, 2)
    assert [(i["doc"], i["clause_type"]) for i in silent.invented] == [("d2", "Cap On Liability")]
    assert [(i["doc"], i["clause_type"]) for i in silent.not_run] == [("d2", "Termination For Convenience")]
    client.force_login(people["manager"])
    page = client.get(reverse("dashboards:run", args=[run.pk])).content.decode()
    invented = page.split('id="invented"', 1)[1].split("</section>", 1)[0]
    assert "Invented clauses (1)" in invented and "Termination For Convenience" not in invented
    assert "Not run (1)" in page
    assert "1 gold-absent pair not run" in client.get(reverse("dashboards:index")).content.decode()


@pytest.mark.django_db
def test_one_corpus_imported_under_two_names_counts_once(engagement, imported_run, corpus, tmp_path):
    copy = benchmarks.import_set(corpus, "mini-cuad again", engagement=engagement)
    assert copy.gold_sha256 == imported_run.benchmark_set.gold_sha256
    later = benchmarks.import_existing(
        benchmarks.new_run(copy, trigger="import"), write_predictions(tmp_path / "2")
    )

    figures = benchmark_figures(everything(engagement))

    assert table(figures.strata) == EXPECTED_BENCH  # not every pair twice
    assert (figures.silent.silent, figures.silent.n) == (1, 2) and len(figures.silent.invented) == 1
    assert [r.pk for r in figures.runs] == [later.pk] and [r.pk for r in figures.silent_runs] == [later.pk]


@pytest.mark.django_db
def test_run_page_colours_present_pairs_against_the_configured_target(client, people, imported_run, settings):
    client.force_login(people["manager"])
    present_kpi = 'class="db-kpi {}"><h2>Present pairs pass</h2><div class="db-big">50%</div>'  # 2 of 4
    assert (
        present_kpi.format("bad")
        in client.get(reverse("dashboards:run", args=[imported_run.pk])).content.decode()
    )
    settings.DASHBOARDS = {**settings.DASHBOARDS, "TARGET_PASS_RATE": 0.5}
    assert (
        present_kpi.format("ok")
        in client.get(reverse("dashboards:run", args=[imported_run.pk])).content.decode()
    )


@pytest.mark.django_db
def test_run_page_and_trend(client, people, imported_run, tmp_path):
    second = benchmarks.import_existing(
        benchmarks.new_run(imported_run.benchmark_set, trigger="import"), write_predictions(tmp_path / "out2")
    )
    client.force_login(people["manager"])
    page = client.get(reverse("dashboards:run", args=[second.pk])).content.decode()
    assert "Invented clauses (1)" in page and "Liability is capped at $1M." in page and CUAD in page
    bench = client.get(reverse("dashboards:benchmarks"))
    trend = bench.context["trends"][0]
    assert [r.pk for r in trend["runs"]] == [imported_run.pk, second.pk]
    assert len(trend["chart"]["series"][0]["points"]) == 2
    assert 'class="db-line"' in bench.content.decode()
