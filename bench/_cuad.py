"""The cuad-dev folder as the retrieval benches read it: a spread of its contracts, the gold rows
of the clause types present in each, and the probes that say whether a chunk holds a gold part.

Data: CUAD v1, The Atticus Project (CC BY 4.0), read from ``../shared/eval/cuad-dev`` (never copied).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CUAD = ROOT.parent / "shared" / "eval" / "cuad-dev"
CREDIT = "CUAD v1, The Atticus Project (CC BY 4.0)"
PROBE = 40  # characters of a gold part's start and end looked for in a chunk
MIN_PART_CHARS = 12  # shorter parts (a bare date) would match by chance


def norm(text: str) -> str:
    """Lower-case letters and digits only, so PDF line breaks and punctuation do not matter."""
    return re.sub(r"[^0-9a-z]+", "", text.lower())


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def pick(listed: list[dict], docs: int) -> list[dict]:
    """``docs`` contracts spread evenly over the folder in name order (0 or more than there are: all)."""
    listed = sorted(listed, key=lambda d: d["doc"])
    if docs and docs < len(listed):
        step = len(listed) / docs
        listed = [listed[int(i * step)] for i in range(docs)]
    return listed


def load(corpus: Path, docs: int, clause_types: set[str]) -> tuple[list[dict], dict[str, list[dict]]]:
    """(the picked rows of documents.jsonl, doc -> its gold rows whose clause is present and in ``clause_types``)."""
    listed = pick(_jsonl(corpus / "documents.jsonl"), docs)
    gold: dict[str, list[dict]] = {}
    for row in _jsonl(corpus / "gold.jsonl"):
        if row["present"] and row["clause_type"] in clause_types:
            gold.setdefault(row["doc"], []).append(row)
    return listed, gold


def probes(row: dict) -> tuple[list[str], set[int]]:
    """(normalised first and last ``PROBE`` characters of each gold part, the pages the parts lie on).
    A chunk holds the clause when it contains any probe."""
    found, pages = [], set()
    for span in row["spans"]:
        for part in span["parts"]:
            text = norm(part["text"])
            if len(text) >= MIN_PART_CHARS:
                found += [text[:PROBE], text[-PROBE:]]
                if part["pages"]:
                    pages.update(range(part["pages"][0], part["pages"][1] + 1))
    return found, pages
