"""A labelled corpus in the cuad-dev format, read and checked before any work (plain files, no database).

``documents.jsonl`` lists the contracts, ``gold.jsonl`` one line per (contract, clause type) with its
labelled spans (see ``../shared/eval/cuad-dev/README.md``). ``load_corpus`` refuses a malformed folder with
the file and line named; ``evaluate`` and the dashboards' benchmark import both read a corpus through it,
so a set the import takes is one its runs can evaluate.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from extraction.evaluation.jsonl import read_jsonl


@dataclass
class Corpus:
    folder: Path
    documents: list[dict]  # documents.jsonl lines, in file order (after --limit)
    gold: list[dict]  # gold.jsonl lines of those documents, in file order

    @property
    def names(self) -> list[str]:
        return [d["doc"] for d in self.documents]

    def halves(self) -> tuple[set[str], set[str]]:
        """(calibration split, held-out split): first and second half of documents.jsonl order."""
        names = self.names
        cut = (len(names) + 1) // 2
        return set(names[:cut]), set(names[cut:])


def _refuse_repeats(
    rows: list[tuple[int, dict]], key: Callable[[dict], object], said: Callable[[dict], str], name: str
) -> None:
    """ValueError naming the line that repeats an earlier one's ``key``, before any work: a run holds one
    task per (document, clause type), so a repeated pair failed the whole run after its ingest, and a
    document listed twice is two PDFs under one name."""
    seen: dict = {}
    for n, row in rows:
        first = seen.setdefault(key(row), n)
        if first != n:
            raise ValueError(f"{name} line {n} repeats {said(row)} (line {first})")


def spans_problem(spans) -> str | None:
    """What is wrong with a gold line's "spans" (None: nothing): the shape cuad-dev's README gives,
    ``[{text, parts: [{text, pages: [first, last] or null}]}]``. The metrics read it only after the
    whole run, where a list of bare texts stopped the command with an AttributeError traceback."""
    if not isinstance(spans, list):
        return '"spans" is not a list'
    for span in spans:
        if not isinstance(span, dict) or not isinstance(span.get("text", ""), str):
            return 'a span is not an object with a "text"'
        parts = span.get("parts") or []
        if not isinstance(parts, list):
            return 'a span\'s "parts" is not a list'
        for part in parts:
            if not isinstance(part, dict) or not isinstance(part.get("text", ""), str):
                return 'a part is not an object with a "text"'
            pages = part.get("pages")
            if pages is not None and not (
                isinstance(pages, list)
                and len(pages) <= 2
                and all(isinstance(page, int) and not isinstance(page, bool) for page in pages)
            ):
                return f'a part\'s "pages" is {json.dumps(pages)}, not [first, last] or null'
    return None


def load_corpus(folder: Path, limit: int | None = None) -> Corpus:
    listed = read_jsonl(folder / "documents.jsonl", ("doc", "pdf"))
    _refuse_repeats(listed, lambda d: d["doc"], lambda d: f'"{d["doc"]}"', "documents.jsonl")
    lines = read_jsonl(folder / "gold.jsonl", ("doc", "clause_type", "present"))
    _refuse_repeats(
        lines,
        lambda g: (g["doc"], g["clause_type"]),
        lambda g: f"{g['doc']} / {g['clause_type']}",
        "gold.jsonl",
    )
    for n, g in lines:
        problem = spans_problem(g.get("spans") or [])  # an absent pair may leave its spans out
        if problem:
            raise ValueError(f"gold.jsonl line {n}: {problem}")
    known = {d["doc"] for _, d in listed}
    stray = next(((n, g) for n, g in lines if g["doc"] not in known), None)
    if stray is not None:  # a typo or a lost line: its pairs would be left out of every figure without a word
        raise ValueError(
            f'gold.jsonl line {stray[0]} names "{stray[1]["doc"]}", which documents.jsonl does not list'
        )
    docs = [d for _, d in listed]
    if limit:
        docs = docs[:limit]
    keep = {d["doc"] for d in docs}
    gold = [
        {**g, "spans": g.get("spans") or []}  # an absent pair may leave its spans out
        for _, g in lines
        if g["doc"] in keep
    ]
    unlabelled = next((g for g in gold if g["present"] and not g["spans"]), None)
    if unlabelled is not None:  # it could never be a hit: the hit rate would drop with no word said
        raise ValueError(
            f"gold.jsonl: {unlabelled['doc']} / {unlabelled['clause_type']} is present but has no spans"
        )
    return Corpus(folder, docs, gold)
