"""Builders of the dashboard tests' data: the hand-computed reviewer fixture and its expected strata, a
two-contract corpus in the cuad-dev format, and predictions for it.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.utils.text import slugify

from dashboards.figures import Filters
from extraction.models import Citation, ClauseType, Extraction, ExtractionRun
from ingest.models import Chunk, Document
from reviewer.models import Review

CUAD = "CUAD v1, The Atticus Project (CC BY 4.0)"


def clause_type(name: str) -> ClauseType:
    found = ClauseType.objects.filter(name=name).first()
    if found:
        return found
    return ClauseType.objects.create(name=name, slug=slugify(name), description=name, query=name)


def document(engagement, title, doc_type, pages=200):
    return Document.objects.create(
        engagement=engagement,
        file=f"documents/{slugify(title)}.pdf",
        original_name=f"{title}.pdf",
        sha256=slugify(title).ljust(64, "0")[:64],
        title=title,
        doc_type=doc_type,
        page_count=pages,
        status="ready",
    )


def extraction(run, doc, clause, status, page=None, text="clause text"):
    ext = Extraction.objects.create(
        run=run,
        document=doc,
        clause_type=clause_type(clause),
        status=status,
        clause_text="" if status == "not_found" else text,
        engine=run.engine,
        model=run.model,
        dedupe_key=f"k{Extraction.objects.count()}",
    )
    if page is not None:
        ordinal = Chunk.objects.filter(document=doc).count()
        chunk = Chunk.objects.create(
            document=doc,
            chunk_id=f"c{doc.pk}-{ordinal}",
            ordinal=ordinal,
            text=text,
            char_start=0,
            char_end=len(text),
            page_start=page,
            page_end=page,
        )
        # A second citation on a later page: the stratum must follow the FIRST one.
        Citation.objects.create(
            extraction=ext, chunk=chunk, ordinal=1, page=page + 200, start=0, end=4, quote=text[:4]
        )
        Citation.objects.create(
            extraction=ext, chunk=chunk, ordinal=0, page=page, start=0, end=len(text), quote=text
        )
    return ext


def review(ext, user, decision, corrected=""):
    return Review.objects.create(
        extraction=ext,
        reviewer=user,
        decision=decision,
        corrected_text=corrected,
        extraction_version=ext.version,
    )


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
    run2 = ExtractionRun.objects.create(
        engagement=engagement, engine="anthropic", model="claude-sonnet-4-5", status="done"
    )
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
        (folder / "README.md").write_text(
            "A subset of CUAD v1, the Contract Understanding Atticus Dataset.\n"
        )
    docs = [
        {"doc": "d1", "pdf": "pdf/d1.pdf", "txt": "txt/d1.txt", "contract_type": "Distributor", "pages": 200},
        {"doc": "d2", "pdf": "pdf/d2.pdf", "txt": "txt/d2.txt", "contract_type": "License", "pages": 10},
    ]

    def gold(doc, clause, text=None, page=None):
        spans = (
            []
            if text is None
            else [
                {
                    "text": text,
                    "parts": [{"text": text, "txt_char_start": 0, "pages": [page, page] if page else None}],
                }
            ]
        )
        return {"doc": doc, "clause_type": clause, "present": text is not None, "answer": "", "spans": spans}

    rows = [
        gold(
            "d1", "Governing Law", "This Agreement shall be governed by the laws of the State of New York.", 2
        ),
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
    citations = [
        {"chunk_id": f"{doc}-{p}", "page": p, "start": 0, "end": len(text), "quote": text} for p in pages
    ]
    return {
        "doc": doc,
        "clause_type": clause,
        "retrieved": [],
        "extraction": {
            "status": status,
            "clause_text": text if status != "not_found" else "not_found",
            "citations": citations,
        },
        "latency_ms": {"retrieval": 3, "extraction": 5},
    }


PREDICTIONS = [
    predicted(
        "d1",
        "Governing Law",
        "found",
        "This Agreement shall be governed by the laws of the State of New York",
        [2],
    ),
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
    (folder / "metrics.json").write_text(
        json.dumps(
            metrics
            or {
                "engine": "offline",
                "hit_rate": 0.5,
                "silent_source_rate": 0.5,
                "recall_at_k": 0.9,
                "by_clause_type": {"Governing Law": {"n": 2}},
            }
        )
    )
    return folder


def everything(engagement, **kwargs):
    return Filters(engagement_ids=[engagement.pk], **kwargs)


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
