"""The demo's benchmark set: the generated demo PDFs as a corpus in the cuad-dev format.

Gold comes from what the generator planted (:class:`demo.contracts.ContractTruth`): a CUAD
category planted in a contract is a present pair whose parts are the clause's text on each of its
physical pages; a category the generator deliberately leaves out is an absent pair (the answer is
not_found). As in CUAD's labels, the four categories that name something (title, parties, dates:
a median 3 to 5 words per span in cuad-dev) are labelled with the planted values themselves, not
with the paragraph around them.

``make run`` registers this folder as a benchmark set of the demo engagement and runs it once, so
a manager's dashboard shows measured figures from the first start. The contracts are synthetic
and easy: their figures say that the pipeline works end to end, not how well it reads real
contracts (that is what a labelled corpus such as cuad-dev is for).
"""

from __future__ import annotations

import json
from pathlib import Path

from demo.clauses import CUAD_CATEGORIES
from demo.demo_set import DEMO_FILES

# Labelled as the mention itself (CUAD's convention for these; everything else is a passage).
MENTION_TYPES = ("Document Name", "Parties", "Agreement Date", "Effective Date")

README = """# Demo benchmark set (synthetic contracts)

Written by `demo.benchmark_corpus` from the generated demo contracts, in the cuad-dev folder
format (documents.jsonl, gold.jsonl, pdf/). Gold is what the generator planted: a present pair
per planted clause (its text and physical pages; for the title, the parties and the dates, the
names and dates themselves), an absent pair per category the generator left out on purpose.
Regenerated on every `make run`; edits here are overwritten.
"""


def gold_rows(doc: str, truth) -> list[dict]:
    """gold.jsonl lines of one generated contract: every CUAD category planted in it or left out of it."""
    rows = []
    for category in CUAD_CATEGORIES:
        planted = truth.by_type(category)
        if planted:
            spans = [span for clause in planted for span in _spans(category, clause)]
            answer = "; ".join(value for clause in planted for value in clause.values) or "Yes"
            rows.append(
                {"doc": doc, "clause_type": category, "present": True, "answer": answer, "spans": spans}
            )
        elif category in truth.absent:
            rows.append({"doc": doc, "clause_type": category, "present": False, "answer": "No", "spans": []})
    return rows


def _spans(category: str, clause) -> list[dict]:
    """Gold spans of one planted clause: its values for a mention type, else the whole passage."""
    if category in MENTION_TYPES and clause.values:
        pages = [
            next((part.page for part in clause.parts if value in part.text), clause.page)
            for value in clause.values
        ]
        return [
            {"text": value, "parts": [{"text": value, "pages": [page, page]}]}
            for value, page in zip(clause.values, pages)
        ]
    return [
        {
            "text": clause.text,
            "parts": [{"text": part.text, "pages": [part.page, part.page]} for part in clause.parts],
        }
    ]


def write_demo_corpus(folder: str | Path) -> Path:
    """Write the corpus into ``folder`` (the PDFs of the demo set, documents.jsonl, gold.jsonl,
    README.md) and return it. Same generator, same bytes, so gold.jsonl's digest only changes
    when the demo contracts do."""
    folder = Path(folder)
    (folder / "pdf").mkdir(parents=True, exist_ok=True)
    documents, gold = [], []
    for name, (make, kwargs) in DEMO_FILES.items():
        if not name.endswith(".pdf"):
            continue  # gold needs physical pages; the DOCX and XLSX demo files have none
        doc = Path(name).stem
        truth = make(folder / "pdf" / name, **kwargs)
        documents.append(
            {"doc": doc, "pdf": f"pdf/{name}", "contract_type": truth.title, "pages": truth.pages}
        )
        gold.extend(gold_rows(doc, truth))
    _write_jsonl(folder / "documents.jsonl", documents)
    _write_jsonl(folder / "gold.jsonl", gold)
    (folder / "README.md").write_text(README, encoding="utf-8")
    return folder


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
