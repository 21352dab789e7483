"""A manager opens the dashboards in Chromium: headline figures, heatmap, alerts, filters, trends."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.urls import reverse
from django.utils import timezone

from dashboards import benchmarks
from dashboards.models import DashboardSnapshot
from dashboards.tasks import refresh_dashboards
from reviewer.models import Review
from tests.e2e.conftest import AA, contrast
from tests.integration.dashboards.builders import (
    build_reviews,
    extraction,
    predicted,
    review,
    write_corpus,
    write_predictions,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def dashboard_data(engagement, make_member, tmp_path, settings):
    settings.DASHBOARDS = {"CORPUS_ROOTS": [str(tmp_path)], "RUNS_DIR": str(tmp_path / "runs")}
    manager = make_member(engagement, "manager", "manny")
    data = build_reviews(engagement, make_member(engagement, "auditor", "audrey"))
    bset = benchmarks.import_set(write_corpus(tmp_path / "mini-cuad"), "cuad-mini")
    # Two runs for a trend: the second one stops inventing the Cap On Liability clause.
    benchmarks.import_existing(benchmarks.new_run(bset, trigger="import"), write_predictions(tmp_path / "r1"))
    better = write_predictions(tmp_path / "r2")
    lines = (
        (better / "predictions.jsonl")
        .read_text()
        .replace(
            predicted("d2", "Cap On Liability", "found", "Liability is capped at $1M.", [3])["extraction"][
                "clause_text"
            ],
            "not_found",
        )
    )
    (better / "predictions.jsonl").write_text(
        lines.replace(
            '"status": "found", "clause_text": "not_found"',
            '"status": "not_found", "clause_text": "not_found"',
        )
    )
    benchmarks.import_existing(benchmarks.new_run(bset, trigger="import"), better)
    refresh_dashboards(engagement.pk)
    # Earlier days of history for the reviewer trend (only totals matter there).
    snapshot = DashboardSnapshot.objects.get(engagement=engagement)
    for days, passes, silent in ((5, 2, 1), (4, 3, 1), (3, 3, 2), (2, 4, 2), (1, 6, 3)):
        figures = {
            "strata": [
                {
                    "doc_type": "Services",
                    "clause_type": "Governing Law",
                    "section": "front",
                    "n": 9,
                    "passes": passes,
                }
            ],
            "silent": {"n": 4, "silent": silent, "invented": []},
        }
        DashboardSnapshot.objects.create(
            engagement=engagement,
            bounds=snapshot.bounds,
            figures=figures,
            computed_at=timezone.now() - dt.timedelta(days=days),
        )
    return {"manager": manager, "data": data}


def test_manager_reads_the_dashboard_at_a_glance(signed_in, dashboard_data):
    s = signed_in(dashboard_data["manager"])
    page = s.page
    page.goto(reverse("dashboards:index"))
    assert page.locator("h1").inner_text() == "Accuracy dashboard"
    assert "5 of 9 reviewed clauses accepted" in page.locator("#kpi-reviews").inner_text()
    assert page.locator("#kpi-silent-reviews").inner_text().startswith("SILENT SOURCE · REVIEWERS\n50%")
    # heatmap drawn, with an under-target cell and its tooltip
    heat = page.locator("svg.db-heatmap")
    assert heat.is_visible()
    assert page.locator("svg.db-heatmap g.db-cell.below").count() >= 4
    assert "95% CI" in page.locator("svg.db-heatmap g.db-cell.below title").first.text_content()
    # the accessible table under it, worst first
    first_row = page.locator("#strata-table tbody tr").first
    assert "below" in first_row.get_attribute("class")
    alerts = page.locator("#alerts")
    assert "Silent source 50%" in alerts.inner_text() and "Cap On Liability" in alerts.inner_text()
    # every invented clause links to its review screen
    e9 = dashboard_data["data"]["e"][9]
    link = page.locator(f'#invented-reviews a[href="/documents/{e9.document_id}/clauses/{e9.pk}/"]')
    assert link.count() == 1
    assert page.locator("svg.db-line").count() >= 2  # reviewer trend and benchmark trend
    assert "CUAD v1, The Atticus Project (CC BY 4.0)" in page.locator("#credit").inner_text()
    s.shot("dashboard", full_page=True)

    page.select_option("#id_engine", "anthropic")
    page.click("form.db-filters button[type=submit]")
    page.wait_for_url(re.compile(r"engine=anthropic"))
    assert "2 of 3 reviewed clauses accepted" in page.locator("#kpi-reviews").inner_text()
    assert "computed live" in page.locator(".db-asof").inner_text()
    s.shot("dashboard-filtered")

    page.goto(reverse("dashboards:benchmarks"))
    assert page.locator("#runs-rows tr").count() == 2
    s.shot("dashboard-benchmarks", full_page=True)
    page.click("#runs-rows tr:last-child a")  # the first run: it invented a clause
    assert "Invented clauses (1)" in page.locator("#invented").inner_text()
    s.shot("dashboard-run", full_page=True)
    page.goto(reverse("dashboards:alerts"))
    assert page.locator("tbody tr").count() >= 5
    s.shot("dashboard-alerts", full_page=True)


def test_the_dashboard_figures_are_readable_at_aa_contrast(signed_in, dashboard_data, engagement):
    data = dashboard_data["data"]
    auditor = Review.objects.filter(extraction__document=data["a"]).first().reviewer
    for _ in range(5):  # a stratum with enough rows, all passing: the top band, drawn solid
        review(extraction(data["run1"], data["a"], "Payment", "found", 3), auditor, "accept")
    refresh_dashboards(engagement.pk)
    s = signed_in(dashboard_data["manager"])
    s.page.goto(reverse("dashboards:index"))
    low = {}
    cells = s.page.locator("svg.db-heatmap g.db-cell:has(text)")
    assert s.page.locator("svg.db-heatmap g.db-cell.heat-4:not(.thin):has(text)").count()
    for i in range(cells.count()):
        cell = cells.nth(i)
        ratio = contrast(cell.locator("text"), behind=cell.locator("rect"))
        if ratio < AA:
            low[f"{cell.get_attribute('class')} {cell.locator('text').text_content()}"] = round(ratio, 2)
    for sel in (
        ".db-kpi h2",
        ".db-kpi.ok .db-big",
        ".db-kpi.bad .db-big",
        ".db-note",
        ".db-badge.reviews",
        ".db-subnav a[aria-current=page]",
        ".db-table tr.below .db-rate.bad",
        ".db-legend",
    ):
        ratio = contrast(s.page.locator(sel).first)
        if ratio < AA:
            low[sel] = round(ratio, 2)
    assert low == {}
