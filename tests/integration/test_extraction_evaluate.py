"""``manage.py evaluate`` on a two-contract slice of cuad-dev, limited to the first: the files it writes follow
the schema."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from extraction.finder.runtime import active_finder

pytestmark = [pytest.mark.django_db, pytest.mark.corpus]

PREDICTION_KEYS = {"doc", "clause_type", "retrieved", "extraction", "closest", "latency_ms"}


def _slice(cuad_dir, tmp_path, doc_prefix: str, *, then: int = 0):
    """A corpus of the contract named ``doc_prefix`` followed by ``then`` others, in the cuad-dev format."""
    docs = [json.loads(line) for line in open(cuad_dir / "documents.jsonl")]
    keep = [d for d in docs if d["doc"].startswith(doc_prefix)][:1]
    keep += [d for d in docs if not d["doc"].startswith(doc_prefix)][:then]
    (tmp_path / "pdf").symlink_to(cuad_dir / "pdf")
    (tmp_path / "README.md").symlink_to(cuad_dir / "README.md")  # it names CUAD: the figures carry its credit
    (tmp_path / "documents.jsonl").write_text("".join(json.dumps(d) + "\n" for d in keep))
    names = {d["doc"] for d in keep}
    gold = [line for line in open(cuad_dir / "gold.jsonl") if json.loads(line)["doc"] in names]
    (tmp_path / "gold.jsonl").write_text("".join(gold))
    return tmp_path, len(gold)


def test_evaluate_writes_predictions_and_metrics_in_the_documented_shape(cuad_dir, tmp_path):
    (tmp_path / "corpus").mkdir()
    corpus, pairs = _slice(cuad_dir, tmp_path / "corpus", "GridironBionutrients", then=1)
    out = tmp_path / "out"
    call_command("evaluate", str(corpus), out=str(out), engine="offline", k=5, limit=1)  # the first contract

    lines = [json.loads(line) for line in open(out / "predictions.jsonl")]
    assert pairs == 82 and len(lines) == 41  # the second contract's 41 pairs are left out
    assert {p["doc"] for p in lines} == {json.loads(open(corpus / "documents.jsonl").readline())["doc"]}
    for p in lines:
        assert set(p) == PREDICTION_KEYS
        assert set(p["extraction"]) == {"status", "clause_text", "citations"}
        assert p["extraction"]["status"] in {"found", "not_found", "unverified"}
        assert set(p["latency_ms"]) == {"retrieval", "extraction"}
        assert 1 <= len(p["retrieved"]) <= 5
        assert all(set(r) == {"chunk_id", "page_start", "page_end", "text"} for r in p["retrieved"])
        for c in p["extraction"]["citations"]:
            assert set(c) == {"chunk_id", "page", "start", "end", "quote"}
        if p["extraction"]["status"] == "not_found":
            assert p["extraction"]["citations"] == []
            near = p["closest"] or {}  # the sentence the engine judged best (none without a candidate)
            assert not near or set(near) == {"chunk_id", "page", "start", "end", "quote"}
        else:
            assert p["closest"] is None
    assert any(p["closest"] for p in lines)  # the not_founds point at their nearest miss

    m = json.loads((out / "metrics.json").read_text())
    assert m["credit"] == "CUAD v1, The Atticus Project (CC BY 4.0)"
    assert m["engine"] == "offline" and m["k"] == 5 and m["documents"]["total"] == 1
    assert m["finder"]["folder"] == "extraction/finder/artifact" and m["finder"]["fold"] is None
    assert m["finder"]["trained_on"] == active_finder().meta["trained_on"]["sha256"]  # the committed one
    for key in (
        "recall_at_k",
        "hit_rate",
        "citation_page_accuracy",
        "citation_validity",
        "silent_source_rate",
        "false_not_found_rate",
        "false_not_found_closest_hit_rate",
    ):
        assert key in m["overall"]
    assert m["overall"]["citation_validity"] in (None, 1.0)
    assert set(m["per_clause_type"]) == {p["clause_type"] for p in lines}
    assert m["timings_ms"]["retrieval"]["n"] == 41

    # a second run reuses the ingested document (idempotent by content)
    call_command("evaluate", str(corpus), out=str(out), engine="offline", k=3, limit=1)
    m2 = json.loads((out / "metrics.json").read_text())
    assert m2["documents"]["reused"] == 1 and m2["documents"]["ingested"] == 0 and m2["k"] == 3


def _one_doc_corpus(cuad_dir, folder, pdf_bytes: bytes):
    """A corpus of cuad-dev's first contract's 41 gold pairs whose PDF is ``pdf_bytes``."""
    row = json.loads(open(cuad_dir / "documents.jsonl").readline())
    (folder / "pdf").mkdir(parents=True)
    (folder / "pdf" / "contract.pdf").write_bytes(pdf_bytes)
    (folder / "documents.jsonl").write_text(json.dumps({**row, "pdf": "pdf/contract.pdf"}) + "\n")
    gold = [line for line in open(cuad_dir / "gold.jsonl") if json.loads(line)["doc"] == row["doc"]]
    (folder / "gold.jsonl").write_text("".join(gold))
    return folder, row["doc"], gold


def test_a_pdf_that_fails_to_convert_is_reported_and_the_figures_are_still_written(cuad_dir, tmp_path):
    corpus, doc, gold = _one_doc_corpus(
        cuad_dir, tmp_path / "corpus", b"%PDF-1.4\n" + b"\x00 not a pdf body " * 64
    )
    out = tmp_path / "out"
    with pytest.raises(CommandError, match="every one of the 41 pairs failed"):  # said, not a traceback
        call_command("evaluate", str(corpus), out=str(out), engine="offline")

    m = json.loads((out / "metrics.json").read_text())
    assert [f["doc"] for f in m["documents"]["not_ready"]] == [doc]
    lines = [json.loads(line) for line in open(out / "predictions.jsonl")]
    assert len(lines) == len(gold) and {p["extraction"]["status"] for p in lines} == {"failed"}
    assert m["overall"]["failed"] == len(gold)
    # no answer was given: neither silent nor invented, not a false not_found either
    assert m["overall"]["silent_source_rate"] is None and m["overall"]["false_not_found_rate"] is None
    assert m["timings_ms"]["retrieval"]["n"] == 0 and m["timings_ms"]["extraction"]["n"] == 0


def test_a_pdf_refused_at_intake_is_reported_with_its_reason_and_the_run_goes_on(cuad_dir, tmp_path):
    corpus, doc, gold = _one_doc_corpus(cuad_dir, tmp_path / "corpus", b"")  # an empty file
    out = tmp_path / "out"
    with pytest.raises(CommandError, match="every one of the 41 pairs failed"):
        call_command("evaluate", str(corpus), out=str(out), engine="offline")

    m = json.loads((out / "metrics.json").read_text())
    assert m["documents"]["not_ready"] == [
        {"doc": doc, "status": "refused", "error": "“contract.pdf” is empty."}
    ]
    lines = [json.loads(line) for line in open(out / "predictions.jsonl")]
    assert len(lines) == len(gold) and {p["extraction"]["status"] for p in lines} == {"failed"}

    (corpus / "pdf" / "contract.pdf").unlink()  # documents.jsonl names a file that is not there
    with pytest.raises(CommandError, match="every one of the 41 pairs failed"):
        call_command("evaluate", str(corpus), out=str(out), engine="offline")
    (refused,) = json.loads((out / "metrics.json").read_text())["documents"]["not_ready"]
    assert (
        refused["status"] == "refused" and "contract.pdf could not be read: No such file" in refused["error"]
    )


def test_the_anthropic_engine_without_a_key_is_refused_before_any_ingest(cuad_dir, tmp_path, settings):
    from django.core.management.base import CommandError

    from ingest.models import Document

    settings.ANTHROPIC_API_KEY = ""
    corpus, _, _ = _one_doc_corpus(
        cuad_dir, tmp_path / "corpus", b"%PDF-1.4\n" + b"\x00 not a pdf body " * 64
    )
    with pytest.raises(CommandError, match="ANTHROPIC_API_KEY"):
        call_command("evaluate", str(corpus), out=str(tmp_path / "out"), engine="anthropic")
    assert not Document.objects.exists() and not (tmp_path / "out").exists()


def test_an_out_path_that_is_a_file_is_refused_before_any_ingest(cuad_dir, tmp_path):
    from django.core.management.base import CommandError

    from ingest.models import Document

    corpus, _, _ = _one_doc_corpus(
        cuad_dir, tmp_path / "corpus", b"%PDF-1.4\n" + b"\x00 not a pdf body " * 64
    )
    taken = tmp_path / "results"
    taken.write_text("an earlier report\n")
    with pytest.raises(CommandError, match="results.*not a folder"):
        call_command("evaluate", str(corpus), out=str(taken), engine="offline")
    assert not Document.objects.exists() and taken.read_text() == "an earlier report\n"


@pytest.mark.parametrize("limit", [0, -1])
def test_a_limit_below_one_is_refused_not_read_as_the_whole_corpus(cuad_dir, tmp_path, limit):
    from django.core.management.base import CommandError

    from ingest.models import Document

    corpus, _, _ = _one_doc_corpus(
        cuad_dir, tmp_path / "corpus", b"%PDF-1.4\n" + b"\x00 not a pdf body " * 64
    )
    with pytest.raises(CommandError, match="--limit must be at least 1"):
        call_command("evaluate", str(corpus), out=str(tmp_path / "out"), engine="offline", limit=limit)
    assert not Document.objects.exists()


def test_a_corpus_label_the_catalog_lacks_is_evaluated_without_joining_every_run():
    from extraction import launch
    from extraction.evaluation.runner import clause_type_rows

    rows = clause_type_rows(["Confidentiality", "Governing Law"])
    assert rows["Governing Law"].source == "cuad" and rows["Confidentiality"].source == "custom"
    # searched for by its name in this evaluation, but not added to the catalog every run extracts
    assert not rows["Confidentiality"].active
    assert "Confidentiality" not in {t.name for t in launch.active_types()}
    assert clause_type_rows(["Confidentiality"])["Confidentiality"].pk == rows["Confidentiality"].pk


def test_a_finder_folder_without_an_artifact_is_refused_before_any_ingest(cuad_dir, tmp_path, settings):
    from ingest.models import Document

    (tmp_path / "corpus").mkdir()
    corpus, _ = _slice(cuad_dir, tmp_path / "corpus", "GridironBionutrients")
    settings.CLAUSE_FINDER_DIR = str(tmp_path / "no-finder-here")
    with pytest.raises(CommandError, match="CLAUSE_FINDER_DIR=.*holds no clause_finder"):
        call_command("evaluate", str(corpus), out=str(tmp_path / "out"), engine="offline")
    assert not Document.objects.exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize("gold", ["", "\n", '{"doc": "later", "clause_type": "Parties", "present": false}\n'])
def test_a_corpus_with_no_gold_pair_to_score_is_refused_before_any_ingest(tmp_path, gold):
    from django.core.management.base import CommandError

    from ingest.models import Document

    corpus = tmp_path / "corpus"
    (corpus / "pdf").mkdir(parents=True)
    for name in ("first", "later"):
        (corpus / "pdf" / f"{name}.pdf").write_bytes(b"%PDF-1.4\n" + name.encode() * 64)
    (corpus / "documents.jsonl").write_text(
        "".join(json.dumps({"doc": name, "pdf": f"pdf/{name}.pdf"}) + "\n" for name in ("first", "later"))
    )
    (corpus / "gold.jsonl").write_text(gold)  # empty, or only pairs of a document --limit leaves out
    with pytest.raises(CommandError, match=r"gold\.jsonl has no pair of the 1 document\(s\) evaluated"):
        call_command("evaluate", str(corpus), out=str(tmp_path / "out"), engine="offline", limit=1)
    assert not Document.objects.exists() and not (tmp_path / "out").exists()  # no metrics.json of 0 pairs


def test_two_documents_with_the_same_file_are_evaluated_once_and_the_copy_is_named(tmp_path):
    from tests.integration.extraction_fixtures import ANSWERS, write_contract_pdf

    corpus = tmp_path / "corpus"
    (corpus / "pdf").mkdir(parents=True)
    write_contract_pdf(corpus / "pdf" / "supply.pdf")
    (corpus / "pdf" / "supply copy.pdf").write_bytes((corpus / "pdf" / "supply.pdf").read_bytes())
    docs = {"supply": "pdf/supply.pdf", "supply copy": "pdf/supply copy.pdf"}
    (corpus / "documents.jsonl").write_text(
        "".join(json.dumps({"doc": d, "pdf": p}) + "\n" for d, p in docs.items())
    )
    law = ANSWERS["Governing Law"]
    (corpus / "gold.jsonl").write_text(
        "".join(
            json.dumps(row) + "\n"
            for d in docs
            for row in (
                {
                    "doc": d,
                    "clause_type": "Governing Law",
                    "present": True,
                    "spans": [{"text": law, "parts": [{"text": law, "pages": [3, 3]}]}],
                },
                {"doc": d, "clause_type": "Non-Compete", "present": False, "spans": []},
            )
        )
    )
    out = tmp_path / "out"
    call_command("evaluate", str(corpus), out=str(out), engine="offline")  # finishes: no IntegrityError

    m = json.loads((out / "metrics.json").read_text())
    assert m["documents"]["not_ready"] == [
        {"doc": "supply copy", "status": "duplicate", "error": "the same file as supply (pdf/supply.pdf)"}
    ]
    lines = {
        (p["doc"], p["clause_type"]): p["extraction"]["status"]
        for p in map(json.loads, open(out / "predictions.jsonl"))
    }
    assert lines[("supply copy", "Governing Law")] == lines[("supply copy", "Non-Compete")] == "failed"
    assert lines[("supply", "Governing Law")] != "failed" and m["overall"]["failed"] == 2


def _fake_pdf_corpus(folder, gold_rows):
    """A corpus of one document, "c1", whose PDF does not convert, with ``gold_rows`` (clause type, present)."""
    (folder / "pdf").mkdir(parents=True)
    (folder / "pdf" / "c1.pdf").write_bytes(b"%PDF-1.4\n" + b"\x00 not a pdf body " * 64)
    (folder / "documents.jsonl").write_text(json.dumps({"doc": "c1", "pdf": "pdf/c1.pdf"}) + "\n")
    span = [
        {
            "text": "This Agreement is governed by the laws of Delaware.",
            "parts": [{"text": "This Agreement is governed by the laws of Delaware.", "pages": [1, 1]}],
        }
    ]
    (folder / "gold.jsonl").write_text(
        "".join(
            json.dumps({"doc": "c1", "clause_type": t, "present": p, "spans": span if p else []}) + "\n"
            for t, p in gold_rows
        )
    )
    return folder


def test_an_evaluation_in_which_every_pair_failed_exits_non_zero_saying_why(tmp_path, capsys):
    corpus = _fake_pdf_corpus(tmp_path / "corpus", [("Governing Law", True), ("Non-Compete", False)])
    out = tmp_path / "out"
    with pytest.raises(CommandError) as failed:
        call_command("evaluate", str(corpus), out=str(out), engine="offline")
    message = str(failed.value)
    assert message.startswith("every one of the 2 pairs failed, none was answered: ")
    assert "1 document(s) not ready (e.g. c1: failed" in message
    # its figures are written all the same, for a look at what happened
    assert json.loads((out / "metrics.json").read_text())["overall"]["failed"] == 2
    assert "wrote " in capsys.readouterr().out


def test_calibrating_on_a_half_with_one_kind_of_pair_is_refused_before_any_ingest(tmp_path):
    from django.core.management.base import CommandError

    from extraction.offline.engine import CALIBRATION_FILE
    from ingest.models import Document

    shipped = CALIBRATION_FILE.read_bytes()
    corpus = _fake_pdf_corpus(tmp_path / "corpus", [("Non-Compete", False), ("Insurance", False)])
    with pytest.raises(
        CommandError, match=r"cannot calibrate: the first half's gold has 0 present and 2 absent"
    ):
        call_command("evaluate", str(corpus), out=str(tmp_path / "out"), engine="offline", calibrate=True)
    assert not Document.objects.exists() and CALIBRATION_FILE.read_bytes() == shipped


def test_calibrating_when_no_pair_got_an_answer_is_refused_and_the_shipped_calibration_kept(tmp_path):
    from django.core.management.base import CommandError

    from extraction.offline.engine import CALIBRATION_FILE

    shipped = CALIBRATION_FILE.read_bytes()
    corpus = _fake_pdf_corpus(tmp_path / "corpus", [("Governing Law", True), ("Non-Compete", False)])
    with pytest.raises(
        CommandError,
        match=r"cannot calibrate: of the first half's pairs 0 present and 0 absent got "
        r"an answer .*nothing written",
    ):
        call_command("evaluate", str(corpus), out=str(tmp_path / "out"), engine="offline", calibrate=True)
    assert CALIBRATION_FILE.read_bytes() == shipped


def test_a_run_that_fails_after_extraction_leaves_the_older_runs_files_as_they_were(tmp_path, monkeypatch):
    # predictions.jsonl was written before the figures were computed: a run that failed there (or was stopped)
    # left new predictions beside the older run's metrics.json, a pair of files that did not belong together
    from extraction.evaluation import metrics as evaluation

    corpus = _fake_pdf_corpus(tmp_path / "corpus", [("Governing Law", True), ("Non-Compete", False)])
    out = tmp_path / "out"
    out.mkdir()
    before = {
        name: f"the older run's {name}\n" for name in ("predictions.jsonl", "scores.jsonl", "metrics.json")
    }
    for name, text in before.items():
        (out / name).write_text(text)

    def broken(records):
        raise RuntimeError("stopped while the figures were computed")

    monkeypatch.setattr(evaluation, "summarise", broken)
    with pytest.raises(RuntimeError):
        call_command("evaluate", str(corpus), out=str(out), engine="offline")
    assert {name: (out / name).read_text() for name in before} == before
    assert sorted(p.name for p in out.iterdir()) == sorted(before)  # and no temporary file left behind


def test_user_wordings_reads_the_corpus_where_evaluate_left_it_without_being_told_the_engagement(
    cuad_dir, tmp_path
):
    """The README's order: `manage.py evaluate CORPUS --out DIR`, then `python -m bench.user_wordings`.
    With neither naming an engagement, the bench finds the documents `evaluate` ingested (it looked in a
    "cuad-dev 2000" engagement that `evaluate` never makes, and stopped with "No documents")."""
    from bench import user_wordings

    (tmp_path / "corpus").mkdir()
    corpus, _ = _slice(cuad_dir, tmp_path / "corpus", "GridironBionutrients")
    call_command("evaluate", str(corpus), out=str(tmp_path / "out"), engine="offline")

    result = user_wordings.main(["--corpus", str(corpus)])
    assert result["documents"] == 1
    assert result["credit"] == "CUAD v1, The Atticus Project (CC BY 4.0)"
    assert set(result["types"]) == set(user_wordings.RESTATED)
