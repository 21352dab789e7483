"""``manage.py train_clause_finder``: fitted on cuad-train contracts (CUAD v1, The Atticus Project,
CC BY 4.0, read from ../shared/eval, never copied), an artifact the engines load."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from extraction.finder.runtime import active_finder, load_finder
from extraction.finder.training import FOLDS, training_hash
from ingest.models import Document

pytestmark = [pytest.mark.django_db, pytest.mark.corpus]


def _shortest(cuad_train_dir, folder, n: int):
    """A corpus of the ``n`` shortest cuad-train contracts (by pages), in the same format."""
    docs = [json.loads(line) for line in open(cuad_train_dir / "documents.jsonl")]
    keep = sorted(docs, key=lambda d: (d["pages"], d["doc"]))[:n]
    folder.mkdir()
    (folder / "pdf").symlink_to(cuad_train_dir / "pdf")
    (folder / "documents.jsonl").write_text("".join(json.dumps(d) + "\n" for d in keep))
    names = {d["doc"] for d in keep}
    gold = [line for line in open(cuad_train_dir / "gold.jsonl") if json.loads(line)["doc"] in names]
    (folder / "gold.jsonl").write_text("".join(gold))
    return folder


def test_training_writes_a_small_credited_artifact_that_loads(cuad_train_dir, tmp_path):
    corpus, out = _shortest(cuad_train_dir, tmp_path / "corpus", 6), tmp_path / "finder"
    call_command("train_clause_finder", str(corpus), out=str(out))
    facts = json.loads((out / "clause_finder.json").read_text())
    assert "CUAD v1, The Atticus Project" in facts["credit"]
    assert facts["trained_on"]["sha256"] == training_hash(corpus)
    assert facts["trained_on"]["contracts"] == 6 and facts["trained_on"]["positive_sentences"] > 0
    assert (out / "clause_finder.npz").stat().st_size < 1_000_000
    finder = load_finder(out)
    assert finder is not None and finder.knows("Governing Law") and not finder.knows("Payment")
    assert 0.0 < finder.threshold < 1.0
    assert set(facts["out_of_fold"]) >= {"hit_rate", "silent_source", "false_not_found"}


def test_each_fold_is_written_with_the_contracts_it_never_saw_and_evaluates_them(cuad_train_dir, tmp_path):
    corpus, folds = _shortest(cuad_train_dir, tmp_path / "corpus", 6), tmp_path / "folds"
    call_command("train_clause_finder", str(corpus), out=str(tmp_path / "finder"), folds_out=str(folds))
    listed = [json.loads(line)["doc"] for line in open(corpus / "documents.jsonl")]
    held_out = []
    for k in range(1, FOLDS + 1):
        home = folds / f"fold-{k}"
        docs = [json.loads(line)["doc"] for line in open(home / "corpus" / "documents.jsonl")]
        gold = [json.loads(line) for line in open(home / "corpus" / "gold.jsonl")]
        assert docs and {g["doc"] for g in gold} == set(docs)
        assert (home / "corpus" / "pdf").resolve() == (cuad_train_dir / "pdf").resolve()
        assert json.loads((home / "clause_finder.json").read_text())["held_out"] == sorted(docs)
        held_out += docs
    assert sorted(held_out) == sorted(listed)  # every contract is held out once, by one fold

    with override_settings(CLAUSE_FINDER_DIR=str(folds / "fold-1")):
        assert active_finder().meta["fold"] == 1
        before = Document.objects.count()
        out = tmp_path / "eval"
        call_command("evaluate", str(folds / "fold-1" / "corpus"), out=str(out), engine="offline")
    assert Document.objects.count() == before  # the corpus's engagement and documents, read again
    pairs = [json.loads(line) for line in open(out / "predictions.jsonl")]
    fold_docs = [json.loads(line)["doc"] for line in open(folds / "fold-1" / "corpus" / "documents.jsonl")]
    assert {p["doc"] for p in pairs} == set(fold_docs)
    finder = json.loads((out / "metrics.json").read_text())["finder"]
    assert finder["fold"] == 1 and finder["trained_on"] == training_hash(corpus)


def test_training_refuses_cuad_dev_which_only_reports(cuad_dir, tmp_path):
    with pytest.raises(CommandError, match="fit on cuad-train"):
        call_command("train_clause_finder", str(cuad_dir), out=str(tmp_path / "x"))


def test_training_refuses_too_few_contracts_to_fold(cuad_train_dir, tmp_path):
    with pytest.raises(CommandError, match="5 contracts or more"):
        call_command("train_clause_finder", str(cuad_train_dir), out=str(tmp_path / "x"), limit=3)
