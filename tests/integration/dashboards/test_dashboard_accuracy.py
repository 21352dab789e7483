"""Reviewer figures on real PostgreSQL: strata and silent source equal the hand-computed fixture,
follow the latest review and the filters, and the dashboard page shows them.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from dashboards.figures import reviewer_figures
from dashboards.tasks import refresh_dashboards
from extraction.models import Extraction, ExtractionRun
from reviewer.models import Review
from tests.integration.dashboards.builders import (
    CUAD,
    EXPECTED_STRATA,
    document,
    everything,
    extraction,
    review,
    table,
)


@pytest.mark.django_db
def test_reviewer_strata_equal_the_hand_computed_fixture(engagement, data):
    figures = reviewer_figures(everything(engagement))
    assert table(figures.strata) == EXPECTED_STRATA
    assert [s.below_target for s in figures.strata] == [True, True, True, True, False, False, False]
    assert figures.reviewed == 9
    cap_back = figures.strata[3]
    assert (round(cap_back.low, 3), round(cap_back.high, 3)) == (0.095, 0.905)


@pytest.mark.django_db
def test_silent_source_from_reviewer_marked_absent_pairs(engagement, data):
    silent = reviewer_figures(everything(engagement)).silent
    # absent pairs: (Lease, Governing Law) by e6 and e7, (Lease, Termination) by e8; answers e6 e7 e8 e9
    assert (silent.silent, silent.n) == (2, 4)
    assert silent.rate == 0.5 and silent.below_target
    e = data["e"]
    assert sorted(i["extraction"] for i in silent.invented) == sorted([e[7].pk, e[9].pk])
    invented = {i["extraction"]: i for i in silent.invented}
    assert invented[e[9].pk]["page"] == 40 and invented[e[9].pk]["document"] == data["b"].pk


@pytest.mark.django_db
def test_an_accept_after_a_correction_confirms_the_reviewers_text_not_the_engine(engagement, people):
    run = ExtractionRun.objects.create(engagement=engagement, engine="offline", model="m1", status="done")
    doc = document(engagement, "Corrected MSA", "Services")
    to_absent = extraction(
        run, doc, "Non-Compete", "found", page=3, text="a clause that is not a non-compete"
    )
    to_text = extraction(run, doc, "Governing Law", "not_found")
    first, second = people["auditor"], people["admin"]
    review(to_absent, first, "correct", "not_found")
    review(to_absent, second, "accept")  # a second reviewer confirms the correction
    review(to_text, first, "correct", "governed by the laws of the State of Delaware")
    review(to_text, second, "accept")

    figures = reviewer_figures(everything(engagement))

    assert sum(s.n for s in figures.strata) == 2 and sum(s.passes for s in figures.strata) == 0  # both wrong
    silent = (
        figures.silent
    )  # Non-Compete is absent (the engine answered found: invented), Governing Law is not
    assert (silent.silent, silent.n) == (0, 1) and [i["extraction"] for i in silent.invented] == [
        to_absent.pk
    ]


@pytest.mark.django_db
def test_strata_and_silent_source_agree_on_what_reviewers_said(engagement, people):
    run = ExtractionRun.objects.create(engagement=engagement, engine="offline", model="m1", status="done")
    doc = document(engagement, "Supply", "Supply")
    first, second = people["auditor"], people["admin"]
    # Termination: one reviewer accepts "not found", another rejects a not_found answer ("it is on p.14").
    review(extraction(run, doc, "Termination", "not_found"), first, "accept")
    rejected = extraction(run, doc, "Termination", "not_found")
    review(rejected, second, "reject")
    # Cap On Liability: "not found" accepted, but an unverified answer accepted as the clause too.
    review(extraction(run, doc, "Cap On Liability", "not_found"), first, "accept")
    review(
        extraction(run, doc, "Cap On Liability", "unverified", page=9, text="Liability is capped."),
        second,
        "accept",
    )
    # Non-Compete: the engine said not_found and a reviewer "corrected" it to exactly that.
    restated = extraction(run, doc, "Non-Compete", "not_found")
    review(restated, first, "correct", "not_found")

    figures = reviewer_figures(everything(engagement))

    assert figures.absent_pairs == 1  # Non-Compete only: the others were confirmed present
    assert (figures.silent.silent, figures.silent.n) == (1, 1)
    passed = {(s.clause_type, s.passes, s.n) for s in figures.strata}
    assert ("Non-Compete", 1, 1) in passed  # the same answer, a pass in the strata as in silent source
    assert ("Termination", 1, 2) in passed  # the rejected not_found is a fail


@pytest.mark.django_db
def test_the_latest_review_is_the_one_the_review_screen_shows(engagement, people):
    run = ExtractionRun.objects.create(engagement=engagement, engine="offline", model="m1", status="done")
    ext = extraction(run, document(engagement, "Skewed", "Services"), "Governing Law", "found", page=3)
    review(ext, people["auditor"], "accept")
    later = review(
        ext, people["admin"], "reject"
    )  # recorded last, stamped earlier (a clock that stepped back)
    Review.objects.filter(pk=later.pk).update(created_at=timezone.now() - dt.timedelta(minutes=5))

    figures = reviewer_figures(everything(engagement))

    assert [(s.passes, s.n) for s in figures.strata] == [(0, 1)]  # rejected, as the review screen says


@pytest.mark.django_db
def test_filters_by_engine_model_and_date(engagement, data):
    by_engine = reviewer_figures(everything(engagement, engine="anthropic"))
    assert sorted(table(by_engine.strata)) == sorted(
        [
            ("Services", "Governing Law", "front", 1, 1),
            ("Services", "Cap On Liability", "back", 1, 1),
            ("Lease", "Governing Law", "front", 0, 1),
        ]
    )
    # Absence is known from every review, but only run 2's answers count: e7 and e9, both invented.
    assert (by_engine.silent.silent, by_engine.silent.n) == (0, 2)
    by_model = reviewer_figures(everything(engagement, model="claude-sonnet-4-5"))
    assert table(by_model.strata) == table(by_engine.strata)

    old = timezone.now() - dt.timedelta(days=60)
    Extraction.objects.filter(document=data["a"]).update(created_at=old)
    recent = reviewer_figures(everything(engagement, date_from=timezone.localdate() - dt.timedelta(days=7)))
    assert {s.doc_type for s in recent.strata} == {"Lease"}
    before = reviewer_figures(everything(engagement, date_to=(old + dt.timedelta(days=1)).date()))
    assert {s.doc_type for s in before.strata} == {"Services"}


@pytest.mark.django_db
def test_section_bounds_come_from_settings(engagement, data, settings):
    settings.DASHBOARDS = {"FRONT_MAX_PAGE": 2, "BACK_AFTER_PAGE": 100}
    sections = {
        (s.doc_type, s.clause_type, s.section): s.n for s in reviewer_figures(everything(engagement)).strata
    }
    assert sections[("Services", "Governing Law", "middle")] == 2  # pages 3 and 12 are no longer front
    assert sections[("Lease", "Governing Law", "front")] == 1  # page 2


@pytest.mark.django_db
def test_dashboard_page_shows_the_fixture_numbers(client, engagement, data, people, imported_run):
    client.force_login(people["manager"])
    response = client.get(reverse("dashboards:index"))
    assert response.status_code == 200
    ctx = response.context
    assert (ctx["reviewer_total"].passes, ctx["reviewer_total"].n) == (5, 9)
    assert (ctx["bench_total"].passes, ctx["bench_total"].n) == (3, 6)
    assert len(ctx["alerts_reviews"]) == 4 and len(ctx["alerts_bench"]) == 3
    pairs = ctx["pairs"]
    assert (pairs[0].doc_type, pairs[0].clause_type, pairs[0].section) in {
        ("Lease", "Governing Law", "front"),
        ("Distributor", "Audit Rights", "middle"),
    }
    html = response.content.decode()
    assert "5 of 9 reviewed clauses accepted" in html
    assert (
        f"3 of 6 gold pairs pass · 95% CI 19–81% · latest full run of {imported_run.benchmark_set.name}</p>"
        in html
    )
    assert "2 of 4 answers on reviewer-marked absent clauses were not_found" in html
    assert 'id="strata-table"' in html and '<svg class="db-heatmap"' in html
    e = data["e"]
    assert (
        f'href="/documents/{data["b"].pk}/clauses/{e[9].pk}/"' in html
    )  # invented clause -> its review screen
    assert CUAD in html  # credit wherever CUAD-derived figures are shown
    assert "style=" not in html.split("<main", 1)[1]  # CSP: no inline styles


@pytest.mark.django_db
def test_dashboard_filter_form_narrows_the_page(client, engagement, data, people):
    client.force_login(people["manager"])
    response = client.get(reverse("dashboards:index"), {"engine": "anthropic"})
    assert response.status_code == 200
    assert (response.context["reviewer_total"].passes, response.context["reviewer_total"].n) == (2, 3)
    bad = client.get(reverse("dashboards:index"), {"date_from": "2026-02-01", "date_to": "2026-01-01"})
    assert bad.status_code == 200 and "The start date is after the end date." in bad.content.decode()


@pytest.mark.django_db
def test_reviewer_trend_says_its_figures_are_running_totals(client, engagement, data, people):
    refresh_dashboards(engagement.pk)
    client.force_login(people["manager"])
    html = client.get(reverse("dashboards:index")).content.decode()
    assert "Reviewer figures to date, day by day" in html and "Accepted / reviewed, all time" in html
    assert "Reviewer figures, daily" not in html
