"""Generators of realistic demo documents that the project owns (deterministic from a seed).

Pure Python (fpdf2, python-docx, python-pptx, openpyxl); no Django.

- ``make_contract_pdf``: long contract PDF (up to hundreds of pages) with planted clauses at
  known physical pages -> ``ContractTruth``.
- ``make_contract_docx``, ``make_manual_docx``, ``make_paper_markdown``, ``make_slides_pptx``,
  ``make_workbook_xlsx``: short documents -> ``DocumentTruth``.
- ``write_demo_set``: the files ``make run`` loads.

Names are imported lazily so ``python -m demo.contracts`` runs without a double import.
"""

from importlib import import_module

_EXPORTS = {
    "CUAD_CATEGORIES": "demo.clauses",
    "SEED_TYPES": "demo.clauses",
    "ClausePart": "demo.clauses",
    "PlantedClause": "demo.clauses",
    "ContractTruth": "demo.contracts",
    "make_contract_pdf": "demo.contracts",
    "DEMO_FILES": "demo.demo_set",
    "demo_truths": "demo.demo_set",
    "write_demo_set": "demo.demo_set",
    "DocumentTruth": "demo.documents",
    "KnownText": "demo.documents",
    "make_contract_docx": "demo.documents",
    "make_manual_docx": "demo.documents",
    "make_paper_markdown": "demo.documents",
    "make_slides_pptx": "demo.office",
    "make_workbook_xlsx": "demo.office",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'demo' has no attribute {name!r}")
