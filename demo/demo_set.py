"""The demo documents that ``make run`` loads: small enough for a first run, deterministic."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from demo.contracts import make_contract_pdf
from demo.documents import make_contract_docx
from demo.office import make_workbook_xlsx

# file name -> (generator, keyword arguments); each generator takes the path first
DEMO_FILES: dict[str, tuple[Callable, dict]] = {
    "northwind-brightline-msa.pdf": (make_contract_pdf, {"pages": 40, "seed": 0}),
    "harbor-cascade-supply-agreement.pdf": (
        make_contract_pdf,
        {
            "pages": 12,
            "seed": 7,
            "title": "Supply Agreement",
            "parties": ("Harbor Foods Co.", "Cascade Packaging Ltd."),
            "roles": ("Buyer", "Supplier"),
            "numbering": "decimal",
        },
    ),
    "aldermoor-quillfeather-nda.docx": (make_contract_docx, {"seed": 3}),
    "fee-schedule.xlsx": (make_workbook_xlsx, {}),
}


def write_demo_set(folder: str | Path) -> list[Path]:
    """Write the demo documents into ``folder``; files already there with the same bytes are
    left untouched (mtime kept), changed ones are replaced atomically. Returns the paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (make, kwargs) in DEMO_FILES.items():
        target = folder / name
        tmp = folder / f".{name}.tmp{target.suffix}"
        make(tmp, **kwargs)
        if target.exists() and target.read_bytes() == tmp.read_bytes():
            tmp.unlink()
        else:
            os.replace(tmp, target)
        written.append(target)
    return written


def demo_truths(folder: str | Path) -> dict[str, object]:
    """Truth object of each demo file, paths pointing into ``folder`` (regenerated in a temp dir)."""
    truths = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (make, kwargs) in DEMO_FILES.items():
            truth = make(Path(tmp) / name, **kwargs)
            truths[name] = replace(truth, path=Path(folder) / name)
    return truths
