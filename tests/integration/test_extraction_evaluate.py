"""``manage.py evaluate`` on a two-contract slice of cuad-dev, limited to the first: the files it writes follow
the schema."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command

pytestmark = [pytest.mark.django_db, pytest.mark.corpus]

PREDICTION_KEYS = {"doc", "clause_type", "retrieved", "extraction", "latency_ms"}


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

    m = json.loads((out / "metrics.json").read_text())
    assert m["credit"] == "CUAD v1, The Atticus Project (CC BY 4.0)"
    assert m["engine"] == "offline" and m["k"] == 5 and m["documents"]["total"] == 1
    for key in ("recall_at_k", "hit_rate", "citation_page_accuracy", "citation_validity", "silent_source_rate",
                "false_not_found_rate"):
        assert key in m["overall"]
    assert m["overall"]["citation_validity"] in (None, 1.0)
    assert set(m["per_clause_type"]) == {p["clause_type"] for p in lines}
    assert m["timings_ms"]["retrieval"]["n"] == 41

    # a second run reuses the ingested document (idempotent by content)
    call_command("evaluate", str(corpus), out=str(out), engine="offline", k=3, limit=1)
    m2 = json.loads((out / "metrics.json").read_text())
    assert m2["documents"]["reused"] == 1 and m2["documents"]["ingested"] == 0 and m2["k"] == 3
