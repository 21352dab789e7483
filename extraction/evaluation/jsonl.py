"""Reading JSON Lines files (a corpus's documents.jsonl and gold.jsonl, an evaluation's predictions.jsonl)."""

from __future__ import annotations

import json
from pathlib import Path


def read_jsonl(path: Path, needs: tuple[str, ...] = ()) -> list[tuple[int, dict]]:
    """(line number, row) of each line of a JSON Lines file; ValueError naming the file and line of one
    that is not a JSON object with the keys ``needs`` (said before any work, not as a KeyError after an
    hour of it). Blank lines are skipped."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                raise ValueError(f"{path.name} line {n} is not JSON") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path.name} line {n} is not a JSON object")
            missing = [key for key in needs if key not in row]
            if missing:
                raise ValueError(f"{path.name} line {n} lacks " + ", ".join(f'"{key}"' for key in missing))
            rows.append((n, row))
    return rows
