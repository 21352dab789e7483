"""Document types read from titles (``ingest.doctype``) against CUAD's contract types; prints JSON.

Data: CUAD v1, The Atticus Project (CC BY 4.0) — the cuad-dev subset in ../shared/eval/cuad-dev,
whose documents.jsonl gives each contract's type (the folder CUAD filed it under). Each PDF goes
through ``ingest.convert.convert_file``; only its text is read, never its file name (CUAD's file
names spell the type out). Figures: ``accuracy`` (the type found equals CUAD's, over all
documents), ``coverage`` (a type was found at all), ``precision`` (right when one was found), and
the baseline of always answering the most common type, with the ratio against it.

Usage: ``python bench/doctype_accuracy.py [--corpus DIR] [--limit N] [--show-misses]``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()  # the reader's module also holds the database's type names (no connection is made)

from bench._cuad import CREDIT, CUAD  # noqa: E402
from ingest.convert import convert_file  # noqa: E402
from ingest.doctype import classify  # noqa: E402

DEFAULT_CORPUS = CUAD


def same_type(ours: str | None, cuad: str) -> bool:
    """CUAD writes "License_Agreements", "Co_Branding", "Agency Agreements": compare the stems."""

    def stem(s: str) -> str:
        return re.sub(r"[^a-z]", "", re.sub(r"agreements?", "", s.lower()))

    return ours is not None and stem(ours) == stem(cuad)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--show-misses", action="store_true")
    args = ap.parse_args(argv)
    rows = [
        json.loads(line)
        for line in (args.corpus / "documents.jsonl").read_text().splitlines()
        if line.strip()
    ]
    rows = rows[: args.limit] if args.limit else rows
    majority = Counter(r["contract_type"] for r in rows).most_common(1)[0][0]
    right = found = base = 0
    misses = []
    for r in rows:
        text = convert_file(str(args.corpus / r["pdf"]), filename=Path(r["pdf"]).name).text
        ours = classify(text)
        found += ours is not None
        right += same_type(ours, r["contract_type"])
        base += r["contract_type"] == majority
        if not same_type(ours, r["contract_type"]):
            misses.append({"doc": r["doc"], "cuad": r["contract_type"], "ours": ours})
    n = len(rows)
    out = {
        "credit": CREDIT,
        "documents": n,
        "accuracy": round(right / n, 4),
        "coverage": round(found / n, 4),
        "precision": round(right / found, 4) if found else None,
        "baseline_most_common": {"type": majority, "accuracy": round(base / n, 4)},
        "ratio_to_baseline": round(right / base, 2) if base else None,
    }
    if args.show_misses:
        out["misses"] = misses
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
