"""Importing benchmark sets and finished evaluate output: admins only, under the configured
roots, shared and private sets kept apart, predictions judged against gold.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from django.urls import reverse

from dashboards import benchmarks
from dashboards.figures import Filters, benchmark_figures
from dashboards.models import BenchmarkOutcome, BenchmarkRun
from tests.integration.dashboards.builders import CUAD, predicted, write_corpus, write_predictions


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
    response = client.post(
        reverse("dashboards:benchmark-import"),
        {"path": "mini-cuad", "name": "mini", "weekly_silent_source": "on"},
        follow=True,
    )
    bset = BenchmarkSet.objects.get()
    assert (bset.name, bset.document_count, bset.pair_count, bset.absent_count) == ("mini", 2, 7, 3)
    assert bset.credit == CUAD and bset.engagement is None
    assert "2 documents, 7 pairs (3 absent)" in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "name, line", [("gold.jsonl", '["d1", "Governing Law", true]'), ("documents.jsonl", "7")]
)
def test_an_import_page_names_a_line_that_is_json_but_not_an_object(client, people, corpus, name, line):
    from dashboards.models import BenchmarkSet

    with open(corpus / name, "a") as fh:
        fh.write(line + "\n")  # it was an AttributeError or TypeError: a server error page
    client.force_login(people["admin"])
    response = client.post(
        reverse("dashboards:benchmark-import"),
        {"path": "mini-cuad", "weekly_silent_source": "on"},
        follow=True,
    )
    n = len((corpus / name).read_text().splitlines())
    assert f"Not imported: {name} line {n} is not a JSON object" in response.content.decode()
    assert not BenchmarkSet.objects.exists()


@pytest.mark.django_db
def test_an_import_never_takes_over_another_engagements_set(
    client, engagement, people, other, corpus, tmp_path
):
    theirs = benchmarks.import_set(corpus, "their corpus", engagement=other)
    run = benchmarks.import_existing(
        benchmarks.new_run(theirs, trigger="import"), write_predictions(tmp_path / "o")
    )
    write_corpus(tmp_path / "my-corpus")
    client.force_login(people["admin"])
    for owner in (engagement.pk, ""):  # privately, or as a shared corpus
        response = client.post(
            reverse("dashboards:benchmark-import"),
            {"path": "my-corpus", "name": "their corpus", "engagement": owner, "weekly_silent_source": "on"},
            follow=True,
        )
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
    refreshed = benchmarks.import_set(
        write_corpus(tmp_path / "moved"), "acme corpus", engagement=engagement, weekly_silent_source=False
    )
    assert (refreshed.pk, refreshed.engagement, refreshed.path) == (
        private.pk,
        engagement,
        str((tmp_path / "moved").resolve()),
    )


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


@pytest.mark.django_db
def test_import_predictions_judges_against_gold(imported_run):
    run = imported_run
    assert (run.n, run.passes, run.present_n, run.present_passes, run.silent_n, run.silent) == (
        6,
        3,
        4,
        2,
        2,
        1,
    )
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
    benchmarks.import_predictions(
        imported_run,
        tmp_path / "out" / "predictions.jsonl",
        Path(imported_run.benchmark_set.path) / "gold.jsonl",
        Path(imported_run.benchmark_set.path) / "documents.jsonl",
    )
    assert BenchmarkOutcome.objects.filter(run=imported_run).count() == 6


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
    (other / "predictions.jsonl").write_text(
        json.dumps({"doc": "elsewhere", "clause_type": "Parties", "extraction": {"status": "not_found"}})
        + "\n"
    )
    with pytest.raises(CommandError, match="no prediction that matches the gold pairs"):
        call_command("run_benchmark", bset.name, "--from-output", str(other))
    assert (
        list(BenchmarkRun.objects.filter(benchmark_set=bset).values_list("status", flat=True))
        == ["failed"] * 2
    )


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
            lines.append(
                predicted(doc, clause, "found", span["text"], [p for p in [gold_first_page(row)] if p])
            )
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


def test_a_list_of_parties_passes_when_one_listed_party_is_a_gold_span():
    names = ["Acme Widgets, Inc.", "Beta Logistics LLC", "Gamma Holdings Limited"]
    prediction = {
        "doc": "d1",
        "clause_type": "Parties",
        "extraction": {
            "status": "found",
            "clause_text": "; ".join(names),
            "citations": [{"page": 1, "quote": name} for name in names],
        },
    }
    gold_row = {"present": True, "spans": [{"text": "Beta Logistics LLC", "parts": []}]}
    outcome = benchmarks.judge(prediction, gold_row, "Service")
    assert outcome.passed and outcome.best_jaccard == 1.0
    prediction["extraction"]["clause_text"] = "Acme Widgets, Inc. and two others"  # not its quotes listed
    assert not benchmarks.judge(prediction, gold_row, "Service").passed
