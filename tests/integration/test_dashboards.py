"""Manager dashboards on real PostgreSQL: figures equal a hand-computed fixture, benchmarks import
against gold, the beat tasks snapshot and alert, and only managers and admins see any of it."""
from __future__ import annotations

import datetime as dt
import json
import logging
import time
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone
from django.utils.text import slugify

from dashboards import benchmarks
from dashboards.figures import Filters, benchmark_figures, reviewer_figures
from dashboards.models import Alert, BenchmarkOutcome, BenchmarkRun, DashboardSnapshot
from dashboards.tasks import refresh_dashboards, run_benchmark, weekly_silent_source
from engagements.models import Engagement
from extraction.models import Citation, ClauseType, Extraction, ExtractionRun
from ingest.models import Chunk, Document
from reviewer.models import Review

CUAD = "CUAD v1, The Atticus Project (CC BY 4.0)"


# =========================================================================== fixture builders
def clause_type(name: str) -> ClauseType:
    found = ClauseType.objects.filter(name=name).first()
    if found:
        return found
    return ClauseType.objects.create(name=name, slug=slugify(name), description=name, query=name)


def document(engagement, title, doc_type, pages=200):
    return Document.objects.create(engagement=engagement, file=f"documents/{slugify(title)}.pdf",
                                   original_name=f"{title}.pdf", sha256=slugify(title).ljust(64, "0")[:64],
                                   title=title, doc_type=doc_type, page_count=pages, status="ready")


def extraction(run, doc, clause, status, page=None, text="clause text"):
    ext = Extraction.objects.create(
        run=run, document=doc, clause_type=clause_type(clause), status=status,
        clause_text="" if status == "not_found" else text, engine=run.engine, model=run.model,
        dedupe_key=f"k{Extraction.objects.count()}",
    )
    if page is not None:
        ordinal = Chunk.objects.filter(document=doc).count()
        chunk = Chunk.objects.create(document=doc, chunk_id=f"c{doc.pk}-{ordinal}", ordinal=ordinal, text=text,
                                     char_start=0, char_end=len(text), page_start=page, page_end=page)
        # A second citation on a later page: the stratum must follow the FIRST one.
        Citation.objects.create(extraction=ext, chunk=chunk, ordinal=1, page=page + 200, start=0, end=4, quote=text[:4])
        Citation.objects.create(extraction=ext, chunk=chunk, ordinal=0, page=page, start=0, end=len(text), quote=text)
    return ext


def review(ext, user, decision, corrected=""):
    return Review.objects.create(extraction=ext, reviewer=user, decision=decision, corrected_text=corrected,
                                 extraction_version=ext.version)


def build_reviews(engagement, reviewer_user):
    """The hand-computed fixture (see the expected figures below).

    A "MSA" (Services), B "Lease" (Lease); run 1 offline, run 2 anthropic.
      e1  A Governing Law     found p3    run1  accept                 -> pass   Services·GL·front
      e2  A Governing Law     found p12   run2  accept                 -> pass   Services·GL·front
      e3  A Cap On Liability  found p160  run1  reject                 -> fail   Services·Cap·back
      e4  A Cap On Liability  found p175  run2  reject, then accept    -> pass   Services·Cap·back
      e5  A Cap On Liability  found p80   run1  correct (a text)       -> fail   Services·Cap·middle
      e6  B Governing Law     not_found   run1  accept  (marks absent) -> pass   Lease·GL·none
      e7  B Governing Law     found p2    run2  correct "not_found"    -> fail   Lease·GL·front   (invented)
      e8  B Termination       not_found   run1  accept  (marks absent) -> pass   Lease·Term·none
      e9  B Termination       found p40   run2  (no review)            -> -      (invented)
      e10 B Cap On Liability  found p5    run1  (no review)            -> -
      e11 A Termination       not_found   run1  reject (it is there)   -> fail   Services·Term·none
    """
    run1 = ExtractionRun.objects.create(engagement=engagement, engine="offline", model="", status="done")
    run2 = ExtractionRun.objects.create(engagement=engagement, engine="anthropic", model="claude-sonnet-4-5",
                                        status="done")
    a = document(engagement, "MSA", "Services")
    b = document(engagement, "Lease", "Lease", pages=12)
    e = {
        1: extraction(run1, a, "Governing Law", "found", 3),
        2: extraction(run2, a, "Governing Law", "found", 12),
        3: extraction(run1, a, "Cap On Liability", "found", 160),
        4: extraction(run2, a, "Cap On Liability", "found", 175),
        5: extraction(run1, a, "Cap On Liability", "found", 80),
        6: extraction(run1, b, "Governing Law", "not_found"),
        7: extraction(run2, b, "Governing Law", "found", 2, text="Governed by the laws of Mars."),
        8: extraction(run1, b, "Termination", "not_found"),
        9: extraction(run2, b, "Termination", "found", 40, text="Either party may terminate."),
        10: extraction(run1, b, "Cap On Liability", "found", 5),
        11: extraction(run1, a, "Termination", "not_found"),
    }
    review(e[1], reviewer_user, "accept")
    review(e[2], reviewer_user, "accept")
    review(e[3], reviewer_user, "reject")
    review(e[4], reviewer_user, "reject")
    review(e[4], reviewer_user, "accept")
    review(e[5], reviewer_user, "correct", "The cap is $247.83")
    review(e[6], reviewer_user, "accept")
    review(e[7], reviewer_user, "correct", "not_found")
    review(e[8], reviewer_user, "accept")
    review(e[11], reviewer_user, "reject")
    return {"a": a, "b": b, "e": e, "run1": run1, "run2": run2}


EXPECTED_STRATA = [
    ("Lease", "Governing Law", "front", 0, 1),
    ("Services", "Cap On Liability", "middle", 0, 1),
    ("Services", "Termination", "none", 0, 1),
    ("Services", "Cap On Liability", "back", 1, 2),
    ("Services", "Governing Law", "front", 2, 2),
    ("Lease", "Governing Law", "none", 1, 1),
    ("Lease", "Termination", "none", 1, 1),
]


def table(strata):
    return [(s.doc_type, s.clause_type, s.section, s.passes, s.n) for s in strata]


def write_corpus(folder: Path, cuad_readme=True) -> Path:
    """A two-contract corpus in the cuad-dev format, with gold pages."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pdf").mkdir(exist_ok=True)
    if cuad_readme:
        (folder / "README.md").write_text("A subset of CUAD v1, the Contract Understanding Atticus Dataset.\n")
    docs = [{"doc": "d1", "pdf": "pdf/d1.pdf", "txt": "txt/d1.txt", "contract_type": "Distributor", "pages": 200},
            {"doc": "d2", "pdf": "pdf/d2.pdf", "txt": "txt/d2.txt", "contract_type": "License", "pages": 10}]

    def gold(doc, clause, text=None, page=None):
        spans = [] if text is None else [{"text": text, "parts": [{"text": text, "txt_char_start": 0,
                                                                    "pages": [page, page] if page else None}]}]
        return {"doc": doc, "clause_type": clause, "present": text is not None, "answer": "", "spans": spans}

    rows = [
        gold("d1", "Governing Law", "This Agreement shall be governed by the laws of the State of New York.", 2),
        gold("d1", "Cap On Liability", "In no event shall either party's liability exceed $247.83.", 170),
        gold("d1", "Termination For Convenience"),
        gold("d1", "Audit Rights", "Distributor shall keep complete records open to audit by Supplier.", 60),
        gold("d2", "Governing Law", "This Agreement is governed by the laws of Delaware.", 1),
        gold("d2", "Cap On Liability"),
        gold("d2", "Termination For Convenience"),
    ]
    (folder / "documents.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "gold.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for d in docs:
        (folder / d["pdf"]).write_bytes(b"%PDF-1.4 placeholder")
    return folder


def predicted(doc, clause, status, text="", pages=()):
    citations = [{"chunk_id": f"{doc}-{p}", "page": p, "start": 0, "end": len(text), "quote": text} for p in pages]
    return {"doc": doc, "clause_type": clause, "retrieved": [],
            "extraction": {"status": status, "clause_text": text if status != "not_found" else "not_found",
                           "citations": citations},
            "latency_ms": {"retrieval": 3, "extraction": 5}}


PREDICTIONS = [
    predicted("d1", "Governing Law", "found", "This Agreement shall be governed by the laws of the State of New York",
              [2]),
    predicted("d1", "Cap On Liability", "found", "liability shall be limited", [171]),
    predicted("d1", "Termination For Convenience", "not_found"),
    predicted("d1", "Audit Rights", "not_found"),
    predicted("d2", "Governing Law", "found", "governed by the laws of Delaware", [1]),
    predicted("d2", "Cap On Liability", "found", "Liability is capped at $1M.", [3]),
    # d2 Termination For Convenience: no line (counted as missing, not scored)
    predicted("d9", "Governing Law", "found", "no such document", [1]),  # no gold: unmatched
]

EXPECTED_BENCH = [
    ("Distributor", "Audit Rights", "middle", 0, 1),  # missed: placed by its gold page (60)
    ("Distributor", "Cap On Liability", "back", 0, 1),
    ("License", "Cap On Liability", "front", 0, 1),  # invented on an absent pair
    ("Distributor", "Governing Law", "front", 1, 1),
    ("Distributor", "Termination For Convenience", "none", 1, 1),
    ("License", "Governing Law", "front", 1, 1),
]


def write_predictions(folder: Path, metrics=None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PREDICTIONS))
    (folder / "metrics.json").write_text(json.dumps(metrics or {"engine": "offline", "hit_rate": 0.5,
                                                                "silent_source_rate": 0.5, "recall_at_k": 0.9,
                                                                "by_clause_type": {"Governing Law": {"n": 2}}}))
    return folder


# =========================================================================== fixtures
@pytest.fixture
def people(engagement, make_member):
    return {
        "manager": make_member(engagement, "manager", "manny"),
        "admin": make_member(engagement, "admin", "ada"),
        "auditor": make_member(engagement, "auditor", "audrey"),
    }


@pytest.fixture
def data(engagement, people):
    return build_reviews(engagement, people["auditor"])


@pytest.fixture
def corpus(tmp_path, settings):
    settings.DASHBOARDS = {"CORPUS_ROOTS": [str(tmp_path)], "RUNS_DIR": str(tmp_path / "runs")}
    return write_corpus(tmp_path / "mini-cuad")


@pytest.fixture
def imported_run(corpus, tmp_path):
    bset = benchmarks.import_set(corpus)
    run = benchmarks.new_run(bset, engine="offline", trigger=BenchmarkRun.Trigger.IMPORT)
    return benchmarks.import_existing(run, write_predictions(tmp_path / "out"))


def everything(engagement, **kwargs):
    return Filters(engagement_ids=[engagement.pk], **kwargs)


# =========================================================================== reviewer figures
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
    to_absent = extraction(run, doc, "Non-Compete", "found", page=3, text="a clause that is not a non-compete")
    to_text = extraction(run, doc, "Governing Law", "not_found")
    first, second = people["auditor"], people["admin"]
    review(to_absent, first, "correct", "not_found")
    review(to_absent, second, "accept")  # a second reviewer confirms the correction
    review(to_text, first, "correct", "governed by the laws of the State of Delaware")
    review(to_text, second, "accept")

    figures = reviewer_figures(everything(engagement))

    assert sum(s.n for s in figures.strata) == 2 and sum(s.passes for s in figures.strata) == 0  # both wrong
    silent = figures.silent  # Non-Compete is absent (the engine answered found: invented), Governing Law is not
    assert (silent.silent, silent.n) == (0, 1) and [i["extraction"] for i in silent.invented] == [to_absent.pk]


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
    review(extraction(run, doc, "Cap On Liability", "unverified", page=9, text="Liability is capped."), second,
           "accept")
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
    later = review(ext, people["admin"], "reject")  # recorded last, stamped earlier (a clock that stepped back)
    Review.objects.filter(pk=later.pk).update(created_at=timezone.now() - dt.timedelta(minutes=5))

    figures = reviewer_figures(everything(engagement))

    assert [(s.passes, s.n) for s in figures.strata] == [(0, 1)]  # rejected, as the review screen says


@pytest.mark.django_db
def test_filters_by_engine_model_and_date(engagement, data):
    by_engine = reviewer_figures(everything(engagement, engine="anthropic"))
    assert sorted(table(by_engine.strata)) == sorted([
        ("Services", "Governing Law", "front", 1, 1), ("Services", "Cap On Liability", "back", 1, 1),
        ("Lease", "Governing Law", "front", 0, 1)])
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
    sections = {(s.doc_type, s.clause_type, s.section): s.n for s in reviewer_figures(everything(engagement)).strata}
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
        ("Lease", "Governing Law", "front"), ("Distributor", "Audit Rights", "middle")}
    html = response.content.decode()
    assert "5 of 9 reviewed clauses accepted" in html
    assert f"3 of 6 gold pairs pass · 95% CI 19–81% · latest full run of {imported_run.benchmark_set.name}</p>" in html
    assert "2 of 4 answers on reviewer-marked absent clauses were not_found" in html
    assert 'id="strata-table"' in html and "<svg class=\"db-heatmap\"" in html
    e = data["e"]
    assert f'href="/documents/{data["b"].pk}/clauses/{e[9].pk}/"' in html  # invented clause -> its review screen
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


# =========================================================================== scoping and permissions
@pytest.fixture
def other(make_member, people):
    other = Engagement.objects.create(name="Other audit", client="Other")
    stranger = make_member(other, "auditor", "olga")
    ext_run = ExtractionRun.objects.create(engagement=other, engine="offline", status="done")
    doc = document(other, "Other MSA", "Services")
    review(extraction(ext_run, doc, "Governing Law", "found", 3), stranger, "reject")
    return other


@pytest.mark.django_db
def test_figures_respect_engagement_scoping(client, engagement, data, people, other, make_member):
    client.force_login(people["manager"])
    mine = client.get(reverse("dashboards:index")).context["reviewer_total"]
    assert (mine.passes, mine.n) == (5, 9)  # the other engagement's rejected clause is not counted

    both = make_member(engagement, "manager", "boss")
    from engagements.models import Membership

    Membership.objects.create(user=both, engagement=other, role="admin")
    client.force_login(both)
    total = client.get(reverse("dashboards:index")).context["reviewer_total"]
    assert (total.passes, total.n) == (5, 10)
    only_other = client.get(reverse("dashboards:index"), {"engagement": other.pk}).context["reviewer_total"]
    assert (only_other.passes, only_other.n) == (0, 1)
    # a bad filter beside the engagement is shown with its error and never widens the view to every engagement
    for bad in ({"engine": "no-such-engine"}, {"date_from": "31/12/2025"}):
        response = client.get(reverse("dashboards:index"), {"engagement": other.pk, **bad})
        total = response.context["reviewer_total"]
        assert (total.passes, total.n) == (0, 1) and 'class="errorlist"' in response.content.decode()
    assert client.get(reverse("dashboards:index"), {"engagement": "\u00b2"}).status_code == 404  # not a 500


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["dashboards:index", "dashboards:benchmarks", "dashboards:alerts"])
def test_only_managers_and_admins_see_dashboards(client, engagement, people, django_user_model, name):
    url = reverse(name)
    assert client.get(url).status_code == 302  # anonymous: to the login page
    for who, code in (("manager", 200), ("admin", 200), ("auditor", 403)):
        client.force_login(people[who])
        assert client.get(url).status_code == code, who
    client.force_login(django_user_model.objects.create_user("nobody", password="pw-for-tests-1"))
    assert client.get(url).status_code == 404


@pytest.mark.django_db
def test_asking_for_an_engagement_goes_through_its_role(client, engagement, people, other, make_member):
    client.force_login(people["manager"])
    assert client.get(reverse("dashboards:index"), {"engagement": other.pk}).status_code == 404  # not a member
    assert client.get(reverse("dashboards:index"), {"engagement": 999999}).status_code == 404
    from engagements.models import Membership

    Membership.objects.create(user=people["manager"], engagement=other, role="auditor")
    assert client.get(reverse("dashboards:index"), {"engagement": other.pk}).status_code == 403
    assert client.get(reverse("dashboards:index"), {"engagement": engagement.pk}).status_code == 200
    assert client.post(reverse("dashboards:refresh"), {"engagement": other.pk}).status_code == 403


@pytest.mark.django_db
def test_benchmark_sets_of_another_engagement_stay_hidden(client, engagement, people, other, corpus, tmp_path):
    private = benchmarks.import_set(corpus, "other's corpus", engagement=other)
    run = benchmarks.import_existing(benchmarks.new_run(private, trigger="import"), write_predictions(tmp_path / "o"))
    client.force_login(people["manager"])
    assert client.get(reverse("dashboards:run", args=[run.pk])).status_code == 404
    page = client.get(reverse("dashboards:benchmarks"))
    assert "other&#x27;s corpus" not in page.content.decode() and "other's corpus" not in page.content.decode()
    assert client.get(reverse("dashboards:index")).context["bench_total"].n == 0
    assert client.post(reverse("dashboards:benchmark-run"), {"benchmark_set": private.pk, "scope": "all",
                                                             "engine": "offline", "k": 5}).status_code == 302
    assert not BenchmarkRun.objects.filter(benchmark_set=private).exclude(pk=run.pk).exists()


@pytest.mark.django_db
def test_only_admins_import_corpora_and_only_under_the_roots(client, people, corpus, tmp_path):
    client.force_login(people["manager"])
    page = client.get(reverse("dashboards:benchmarks")).content.decode()
    assert "An admin imports one on this page" in page and "Import a labelled corpus" not in page
    assert client.post(reverse("dashboards:benchmark-import"), {"path": str(corpus)}).status_code == 403
    client.force_login(people["admin"])
    page = client.get(reverse("dashboards:benchmarks")).content.decode()
    assert "Import one below" in page and "Import a labelled corpus" in page
    client.post(reverse("dashboards:benchmark-import"), {"path": "/etc", "weekly_silent_source": "on"})
    assert not BenchmarkRun.objects.exists()
    from dashboards.models import BenchmarkSet

    assert not BenchmarkSet.objects.exists()
    response = client.post(reverse("dashboards:benchmark-import"), {"path": "mini-cuad", "name": "mini",
                                                                    "weekly_silent_source": "on"}, follow=True)
    bset = BenchmarkSet.objects.get()
    assert (bset.name, bset.document_count, bset.pair_count, bset.absent_count) == ("mini", 2, 7, 3)
    assert bset.credit == CUAD and bset.engagement is None
    assert "2 documents, 7 pairs (3 absent)" in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("name, line", [("gold.jsonl", '["d1", "Governing Law", true]'), ("documents.jsonl", "7")])
def test_an_import_page_names_a_line_that_is_json_but_not_an_object(client, people, corpus, name, line):
    from dashboards.models import BenchmarkSet

    with open(corpus / name, "a") as fh:
        fh.write(line + "\n")  # it was an AttributeError or TypeError: a server error page
    client.force_login(people["admin"])
    response = client.post(reverse("dashboards:benchmark-import"), {"path": "mini-cuad", "weekly_silent_source": "on"},
                           follow=True)
    n = len((corpus / name).read_text().splitlines())
    assert f"Not imported: {name} line {n} is not a JSON object" in response.content.decode()
    assert not BenchmarkSet.objects.exists()


@pytest.mark.django_db
def test_an_import_never_takes_over_another_engagements_set(client, engagement, people, other, corpus, tmp_path):
    theirs = benchmarks.import_set(corpus, "their corpus", engagement=other)
    run = benchmarks.import_existing(benchmarks.new_run(theirs, trigger="import"), write_predictions(tmp_path / "o"))
    write_corpus(tmp_path / "my-corpus")
    client.force_login(people["admin"])
    for owner in (engagement.pk, ""):  # privately, or as a shared corpus
        response = client.post(reverse("dashboards:benchmark-import"), {
            "path": "my-corpus", "name": "their corpus", "engagement": owner, "weekly_silent_source": "on"},
            follow=True)
        assert "Not imported: the name “their corpus” is taken" in response.content.decode()
        theirs.refresh_from_db()
        assert (theirs.engagement, theirs.path) == (other, str(corpus.resolve()))
    assert client.get(reverse("dashboards:run", args=[run.pk])).status_code == 404
    assert "Liability is capped" not in client.get(reverse("dashboards:index")).content.decode()


@pytest.mark.django_db
def test_an_import_keeps_shared_and_private_sets_apart(engagement, other, corpus, tmp_path):
    shared = benchmarks.import_set(corpus, "shared corpus")
    private = benchmarks.import_set(corpus, "acme corpus", engagement=engagement)
    with pytest.raises(benchmarks.ImportRefused):
        benchmarks.import_set(corpus, "shared corpus", engagement=engagement)
    with pytest.raises(benchmarks.ImportRefused):
        benchmarks.import_set(corpus, "acme corpus")
    with pytest.raises(benchmarks.ImportRefused):
        benchmarks.import_set(corpus, "acme corpus", engagement=other)
    shared.refresh_from_db(), private.refresh_from_db()
    assert shared.engagement is None and private.engagement == engagement
    # Refreshing a set in its own scope still works, and keeps its owner.
    refreshed = benchmarks.import_set(write_corpus(tmp_path / "moved"), "acme corpus", engagement=engagement,
                                      weekly_silent_source=False)
    assert (refreshed.pk, refreshed.engagement, refreshed.path) == (private.pk, engagement,
                                                                   str((tmp_path / "moved").resolve()))


@pytest.mark.django_db
def test_import_command_never_turns_a_private_set_shared(engagement, corpus):
    from django.core.management import CommandError, call_command

    private = benchmarks.import_set(corpus, "acme corpus", engagement=engagement)
    with pytest.raises(CommandError, match="taken"):
        call_command("import_benchmark", str(corpus), "--name", "acme corpus")
    private.refresh_from_db()
    assert private.engagement == engagement
    call_command("import_benchmark", str(corpus), "--name", "acme corpus", "--engagement", str(engagement.pk))
    private.refresh_from_db()
    assert private.engagement == engagement


# =========================================================================== benchmarks
@pytest.mark.django_db
def test_import_predictions_judges_against_gold(imported_run):
    run = imported_run
    assert (run.n, run.passes, run.present_n, run.present_passes, run.silent_n, run.silent) == (6, 3, 4, 2, 2, 1)
    assert run.metrics["import"] == {"outcomes": 6, "unmatched": 1, "missing": 1}
    assert run.metrics["recall_at_k"] == 0.9 and run.status == "done" and run.engine == "offline"
    outcomes = {(o.doc, o.clause_type): o for o in run.outcomes.all()}
    assert outcomes[("d2", "Governing Law")].best_jaccard == pytest.approx(0.625)
    assert outcomes[("d2", "Governing Law")].passed
    audit = outcomes[("d1", "Audit Rights")]
    assert (audit.page, audit.page_from, audit.passed) == (60, "gold", False)
    assert outcomes[("d1", "Cap On Liability")].page == 171
    invented = outcomes[("d2", "Cap On Liability")]
    assert (invented.status, invented.passed, invented.page_from) == ("found", False, "citation")
    assert outcomes[("d1", "Termination For Convenience")].page is None


@pytest.mark.django_db
def test_import_is_idempotent(imported_run, tmp_path):
    benchmarks.import_predictions(imported_run, tmp_path / "out" / "predictions.jsonl",
                                  Path(imported_run.benchmark_set.path) / "gold.jsonl",
                                  Path(imported_run.benchmark_set.path) / "documents.jsonl")
    assert BenchmarkOutcome.objects.filter(run=imported_run).count() == 6


@pytest.mark.django_db
def test_benchmark_strata_and_silent_source(engagement, imported_run):
    figures = benchmark_figures(everything(engagement))
    assert table(figures.strata) == EXPECTED_BENCH
    assert (figures.silent.silent, figures.silent.n) == (1, 2)
    assert [(i["doc"], i["clause_type"]) for i in figures.silent.invented] == [("d2", "Cap On Liability")]
    assert figures.credits == [CUAD]
    assert benchmark_figures(everything(engagement, engine="anthropic")).strata == []


@pytest.mark.django_db
def test_a_partial_run_neither_replaces_the_full_figures_nor_closes_alerts(client, engagement, people, imported_run,
                                                                           tmp_path):
    opened = set(Alert.objects.filter(resolved_at__isnull=True).values_list("pk", flat=True))
    assert len(opened) == 4  # 3 strata and the silent source, from the full run
    # "First 1 documents": only d1 is answered (its strata pass or fail as before; d2's go unmeasured).
    out = tmp_path / "first-1"
    out.mkdir()
    (out / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PREDICTIONS if p["doc"] == "d1"))
    partial = benchmarks.import_existing(benchmarks.new_run(imported_run.benchmark_set, limit=1, trigger="import"),
                                         out)
    assert (partial.n, partial.silent_n, partial.silent) == (4, 1, 1)

    figures = benchmark_figures(everything(engagement))
    assert table(figures.strata) == EXPECTED_BENCH and (figures.silent.silent, figures.silent.n) == (1, 2)
    assert [r.pk for r in figures.runs] == [imported_run.pk] and [r.pk for r in figures.silent_runs] == [imported_run.pk]
    assert set(Alert.objects.filter(resolved_at__isnull=True).values_list("pk", flat=True)) == opened
    client.force_login(people["manager"])
    page = client.get(reverse("dashboards:index")).content.decode()
    assert (f'<a href="/dashboards/benchmarks/runs/{partial.pk}/">#{partial.pk}</a>' in page
            and "first 1 documents" in page.split(f"#{partial.pk}</a>", 1)[1].split("</tr>", 1)[0])


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
    later = benchmarks.import_existing(benchmarks.new_run(copy, trigger="import"), write_predictions(tmp_path / "2"))

    figures = benchmark_figures(everything(engagement))

    assert table(figures.strata) == EXPECTED_BENCH  # not every pair twice
    assert (figures.silent.silent, figures.silent.n) == (1, 2) and len(figures.silent.invented) == 1
    assert [r.pk for r in figures.runs] == [later.pk] and [r.pk for r in figures.silent_runs] == [later.pk]


def fake_evaluate(calls, predictions=PREDICTIONS):
    def call_command(name, corpus_dir, **options):
        calls.append((name, corpus_dir, options))
        out = Path(options["out"])
        out.mkdir(parents=True, exist_ok=True)
        gold = {(r["doc"], r["clause_type"]) for r in map(json.loads, open(Path(corpus_dir) / "gold.jsonl"))}
        lines = [p for p in predictions if (p["doc"], p["clause_type"]) in gold]
        (out / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in lines))
        (out / "metrics.json").write_text(json.dumps({"hit_rate": 0.5, "model": ""}))
    return call_command


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
def test_an_import_with_nothing_to_import_fails_its_run_instead_of_leaving_it_queued(corpus, tmp_path):
    from django.core.management import CommandError, call_command

    bset = benchmarks.import_set(corpus)
    with pytest.raises(CommandError, match="has no predictions.jsonl"):  # a mistyped folder
        call_command("run_benchmark", bset.name, "--from-output", str(tmp_path / "no-such-run"))
    (run,) = BenchmarkRun.objects.filter(benchmark_set=bset)
    # "queued" for a day, it kept the weekly silent-source run of the set from starting
    assert run.status == "failed" and "has no predictions.jsonl" in run.error and run.finished_at

    other = tmp_path / "other-corpus-run"  # predictions of another corpus: no pair to judge, no result
    other.mkdir()
    (other / "predictions.jsonl").write_text(json.dumps(
        {"doc": "elsewhere", "clause_type": "Parties", "extraction": {"status": "not_found"}}) + "\n")
    with pytest.raises(CommandError, match="no prediction that matches the gold pairs"):
        call_command("run_benchmark", bset.name, "--from-output", str(other))
    assert list(BenchmarkRun.objects.filter(benchmark_set=bset).values_list("status", flat=True)) == ["failed"] * 2


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
    assert derived != corpus and all(not json.loads(l)["present"] for l in open(derived / "gold.jsonl"))
    run.refresh_from_db()
    assert (run.n, run.silent_n, run.silent) == (2, 2, 1)
    assert Alert.objects.filter(run=run, kind="silent").exists()
    assert not Alert.objects.filter(run=run, kind="stratum").exists()  # absent-only runs judge silence only
    # A set with a run in progress is not queued twice.
    BenchmarkRun.objects.create(benchmark_set=bset, status="running")
    assert weekly_silent_source() == []


@pytest.mark.django_db
def test_ui_queues_a_benchmark_run_on_commit(client, people, corpus, monkeypatch, django_capture_on_commit_callbacks):
    queued = []
    monkeypatch.setattr("dashboards.tasks.run_benchmark.delay", lambda pk: queued.append(pk))
    bset = benchmarks.import_set(corpus)
    client.force_login(people["manager"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("dashboards:benchmark-run"),
                               {"benchmark_set": bset.pk, "scope": "all", "engine": "offline", "limit": 1, "k": 5})
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
def test_a_broker_that_is_down_fails_the_run_not_the_page(client, people, corpus, monkeypatch,
                                                          django_capture_on_commit_callbacks):
    from kombu.exceptions import OperationalError

    def broker_down(pk):
        raise OperationalError("Error 111 connecting to localhost:6379. Connection refused.")

    monkeypatch.setattr("dashboards.tasks.run_benchmark.delay", broker_down)
    bset = benchmarks.import_set(corpus)
    client.force_login(people["manager"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("dashboards:benchmark-run"),
                               {"benchmark_set": bset.pk, "scope": "all", "engine": "offline", "k": 5})
    run = BenchmarkRun.objects.get()
    assert response.status_code == 302 and response.url == reverse("dashboards:run", args=[run.pk])
    assert run.status == "failed" and "could not be queued" in run.error and "Connection refused" in run.error


@pytest.mark.django_db
def test_a_run_stuck_queued_no_longer_blocks_the_weekly_silent_source_run(corpus, monkeypatch,
                                                                          django_capture_on_commit_callbacks):
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


@pytest.mark.django_db
def test_run_page_colours_present_pairs_against_the_configured_target(client, people, imported_run, settings):
    client.force_login(people["manager"])
    present_kpi = 'class="db-kpi {}"><h2>Present pairs pass</h2><div class="db-big">50%</div>'  # 2 of 4
    assert present_kpi.format("bad") in client.get(reverse("dashboards:run", args=[imported_run.pk])).content.decode()
    settings.DASHBOARDS = {**settings.DASHBOARDS, "TARGET_PASS_RATE": 0.5}
    assert present_kpi.format("ok") in client.get(reverse("dashboards:run", args=[imported_run.pk])).content.decode()


@pytest.mark.django_db
def test_reviewer_trend_says_its_figures_are_running_totals(client, engagement, data, people):
    refresh_dashboards(engagement.pk)
    client.force_login(people["manager"])
    html = client.get(reverse("dashboards:index")).content.decode()
    assert "Reviewer figures to date, day by day" in html and "Accepted / reviewed, all time" in html
    assert "Reviewer figures, daily" not in html


@pytest.mark.django_db
def test_run_page_and_trend(client, people, imported_run, tmp_path):
    second = benchmarks.import_existing(benchmarks.new_run(imported_run.benchmark_set, trigger="import"),
                                        write_predictions(tmp_path / "out2"))
    client.force_login(people["manager"])
    page = client.get(reverse("dashboards:run", args=[second.pk])).content.decode()
    assert "Invented clauses (1)" in page and "Liability is capped at $1M." in page and CUAD in page
    bench = client.get(reverse("dashboards:benchmarks"))
    trend = bench.context["trends"][0]
    assert [r.pk for r in trend["runs"]] == [imported_run.pk, second.pk]
    assert len(trend["chart"]["series"][0]["points"]) == 2
    assert 'class="db-line"' in bench.content.decode()


# =========================================================================== snapshots and alerts (beat)
@pytest.mark.django_db
def test_daily_refresh_snapshots_figures_and_raises_alerts(client, engagement, data, people, caplog):
    with caplog.at_level(logging.WARNING, logger="dashboards.alerts"):
        assert refresh_dashboards() == 1
    snapshot = DashboardSnapshot.objects.get(engagement=engagement)
    assert sum(s["n"] for s in snapshot.figures["strata"]) == 9
    open_alerts = Alert.objects.filter(engagement=engagement, resolved_at__isnull=True)
    assert open_alerts.filter(kind="stratum").count() == 4 and open_alerts.filter(kind="silent").count() == 1
    assert caplog.text.count("ALERT raised") == 5

    # The view now reads the snapshot (a cache): a new review shows after the next refresh.
    review(data["e"][3], people["admin"], "accept")  # Services·Cap·back becomes 2/2
    client.force_login(people["manager"])
    response = client.get(reverse("dashboards:index"))
    assert response.context["reviewer"].as_of == snapshot.computed_at
    assert response.context["reviewer_total"].passes == 5
    assert "open alerts raised by the scheduled checks" in response.content.decode()
    narrowed = client.get(reverse("dashboards:index"), {"engine": "offline"})  # filters compute live
    assert narrowed.context["reviewer"].as_of is None

    refresh_dashboards(engagement.pk)
    assert client.get(reverse("dashboards:index")).context["reviewer_total"].passes == 6
    resolved = Alert.objects.get(key="Services|Cap On Liability|back")
    assert resolved.resolved_at is not None
    assert Alert.objects.filter(engagement=engagement, resolved_at__isnull=True).count() == 4  # no duplicates
    trend = client.get(reverse("dashboards:index")).context["reviewer_trend"]
    assert trend["points"][-1]["passes"] == 6


@pytest.mark.django_db
def test_stale_snapshot_is_recomputed_live(client, engagement, data, people):
    refresh_dashboards(engagement.pk)
    DashboardSnapshot.objects.update(computed_at=timezone.now() - dt.timedelta(days=3))
    review(data["e"][3], people["admin"], "accept")
    client.force_login(people["manager"])
    response = client.get(reverse("dashboards:index"))
    assert response.context["reviewer"].as_of is None and response.context["reviewer_total"].passes == 6


@pytest.mark.django_db
def test_refresh_button_queues_a_refresh(client, engagement, people, monkeypatch, django_capture_on_commit_callbacks):
    queued = []
    monkeypatch.setattr("dashboards.tasks.refresh_dashboards.delay", lambda pk=None: queued.append(pk))
    client.force_login(people["manager"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("dashboards:refresh"), {"engagement": engagement.pk})
    assert response.status_code == 302 and queued == [engagement.pk]
    client.force_login(people["auditor"])
    assert client.post(reverse("dashboards:refresh")).status_code == 403


@pytest.mark.django_db
def test_a_dashboard_form_posted_after_the_session_expired_comes_back_to_its_page(
        client, people, django_capture_on_commit_callbacks):
    from urllib.parse import quote

    # The refresh button pressed after the session expired: POST -> sign in -> the sign-in sends a GET to
    # refresh/, which must land back on the dashboard (nothing queued), not on a blank 405.
    refresh, login = reverse("dashboards:refresh"), reverse("login")
    posted = client.post(refresh, {})
    assert posted.status_code == 302 and posted["Location"] == f"{login}?next={quote(refresh)}"
    signed_in = client.post(login, {"username": people["manager"].username, "password": "pw-for-tests-1",
                                    "next": refresh})
    assert signed_in.status_code == 302 and signed_in["Location"] == refresh
    with django_capture_on_commit_callbacks() as queued:
        back = client.get(refresh)
        # the benchmark forms' POST-only targets send a GET back to the benchmarks page
        run = client.get(reverse("dashboards:benchmark-run"))
        imported = client.get(reverse("dashboards:benchmark-import"))
    assert back.status_code == 302 and back["Location"] == reverse("dashboards:index")
    for answer in (run, imported):
        assert answer.status_code == 302 and answer["Location"] == reverse("dashboards:benchmarks")
    assert queued == [] and not BenchmarkRun.objects.exists()


@pytest.mark.django_db
def test_beat_schedule_names_the_dashboard_tasks(settings):
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {"dashboards.tasks.refresh_dashboards", "dashboards.tasks.weekly_silent_source"} <= tasks


@pytest.mark.django_db(transaction=True)
def test_refresh_runs_on_a_real_worker(celery_worker, engagement, make_member):
    data = build_reviews(engagement, make_member(engagement, "auditor", "wanda"))
    assert data["e"][1].pk
    refresh_dashboards.delay(engagement.pk)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not DashboardSnapshot.objects.filter(engagement=engagement).exists():
        time.sleep(0.2)
    snapshot = DashboardSnapshot.objects.filter(engagement=engagement).first()
    assert snapshot is not None, celery_worker.log_tail()
    assert sum(s["passes"] for s in snapshot.figures["strata"]) == 5
    assert snapshot.figures["silent"]["n"] == 4
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Alert.objects.filter(engagement=engagement).count() < 5:
        time.sleep(0.2)
    assert Alert.objects.filter(engagement=engagement, resolved_at__isnull=True).count() == 5


# =========================================================================== commands
@pytest.mark.django_db
def test_commands_import_a_set_and_a_finished_evaluate_output(corpus, tmp_path, capsys):
    from django.core.management import call_command

    call_command("import_benchmark", str(corpus), "--name", "mini")
    assert "mini: 2 documents, 7 pairs (3 absent)" in capsys.readouterr().out
    call_command("run_benchmark", "mini", "--from-output", str(write_predictions(tmp_path / "eval")))
    result = json.loads(capsys.readouterr().out)
    assert (result["pairs"], result["passes"], result["silent_source"]) == (6, 3, 0.5)
    call_command("refresh_dashboards")
    assert "refreshed" in capsys.readouterr().out


# =========================================================================== the real corpus
@pytest.mark.corpus
@pytest.mark.django_db
def test_cuad_dev_imports_as_a_set_and_perfect_answers_score_perfectly(cuad_dir, tmp_path):
    from dashboards.corpus import gold_first_page, load_gold

    bset = benchmarks.import_set(cuad_dir, "cuad-dev")
    assert (bset.document_count, bset.pair_count, bset.absent_count) == (89, 3649, 2510)
    assert bset.credit == CUAD and "Distributor" in bset.contract_types
    # Perfect answers for every pair of every document: present -> a gold span cited on its gold page.
    lines = []
    for (doc, clause), row in load_gold(cuad_dir / "gold.jsonl").items():
        if row["present"]:
            span = row["spans"][0]
            lines.append(predicted(doc, clause, "found", span["text"], [p for p in [gold_first_page(row)] if p]))
        else:
            lines.append(predicted(doc, clause, "not_found"))
    out = tmp_path / "perfect"
    out.mkdir()
    (out / "predictions.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    started = time.monotonic()
    run = benchmarks.import_existing(benchmarks.new_run(bset, trigger="import"), out)
    assert time.monotonic() - started < 30
    assert (run.n, run.passes, run.silent_n, run.silent) == (3649, 3649, 2510, 2510)
    figures = benchmark_figures(Filters(engagement_ids=[]))
    assert sum(s.n for s in figures.strata) == 3649 and not any(s.below_target for s in figures.strata)
    assert {s.section for s in figures.strata} >= {"front", "middle", "none"}


@pytest.mark.django_db
def test_the_dashboards_link_is_offered_only_to_those_it_lets_in(client, engagement, people):
    link = f'href="{reverse("dashboards:index")}"'
    for who, shown in (("manager", True), ("admin", True), ("auditor", False)):
        client.force_login(people[who])
        for page in (reverse("home"), reverse("catalog"), reverse("engagement", args=[engagement.pk])):
            assert (link in client.get(page).content.decode()) is shown, (who, page)
