"""Reading a labelled corpus in the cuad-dev format (documents.jsonl, gold.jsonl, pdf/).

Plain file reading and validation; no database.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from extraction.evaluation import jsonl
from extraction.evaluation.corpus import load_corpus
from extraction.evaluation.metrics import corpus_credit


class CorpusError(ValueError):
    """The folder is not a corpus in the cuad-dev format (the message says what is wrong)."""


@dataclass
class CorpusSummary:
    path: Path
    document_count: int
    pair_count: int
    absent_count: int
    contract_types: list[str]
    gold_sha256: str
    credit: str = ""
    problems: list[str] = field(default_factory=list)


def read_jsonl(path: Path) -> list[dict]:
    """The rows of a JSON Lines file; CorpusError naming the file and line of one that is not a JSON object
    (every reader looks keys up in it: said here, not as a server error)."""
    try:
        return [row for _, row in jsonl.read_jsonl(Path(path))]
    except ValueError as exc:
        raise CorpusError(str(exc)) from None


def load_documents(documents_path: Path) -> dict[str, dict]:
    """doc -> its documents.jsonl line."""
    documents = {}
    for row in read_jsonl(Path(documents_path)):
        if "doc" not in row:
            raise CorpusError(f"{Path(documents_path).name}: a line has no 'doc'")
        documents[row["doc"]] = row
    return documents


def load_gold(gold_path: Path) -> dict[tuple[str, str], dict]:
    """(doc, clause_type) -> its gold.jsonl line."""
    gold = {}
    for row in read_jsonl(Path(gold_path)):
        missing = {"doc", "clause_type", "present"} - row.keys()
        if missing:
            raise CorpusError(f"{Path(gold_path).name}: a line lacks {', '.join(sorted(missing))}")
        gold[(row["doc"], row["clause_type"])] = row
    return gold


def gold_span_texts(gold_row: dict) -> list[str]:
    return [span.get("text", "") for span in gold_row.get("spans") or [] if span.get("text")]


def gold_first_page(gold_row: dict) -> int | None:
    """The first physical page of the first located gold part (None when no part could be located)."""
    pages = [
        part["pages"][0]
        for span in gold_row.get("spans") or []
        for part in span.get("parts") or []
        if part.get("pages")
    ]
    return min(pages) if pages else None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def summarise(folder: Path) -> CorpusSummary:
    """Validate a corpus folder and count what it holds; raises CorpusError when it is not one.

    The folder is read by ``evaluate``'s own loader, so a set is refused here for whatever would stop
    its benchmark runs later (a repeated pair, malformed spans, a present pair without spans...), with
    the file and line named."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CorpusError(f"{folder} is not a folder")
    for name in ("documents.jsonl", "gold.jsonl"):
        if not (folder / name).is_file():
            raise CorpusError(f"{folder} has no {name}")
    try:
        corpus = load_corpus(folder)
    except ValueError as exc:
        raise CorpusError(str(exc)) from None
    if not corpus.documents or not corpus.gold:
        raise CorpusError(f"{folder}: documents.jsonl or gold.jsonl is empty")
    problems = []
    missing_pdfs = [d["doc"] for d in corpus.documents if d.get("pdf") and not (folder / d["pdf"]).is_file()]
    if missing_pdfs:
        problems.append(f"{len(missing_pdfs)} PDF(s) listed in documents.jsonl are missing")
    return CorpusSummary(
        path=folder.resolve(),
        document_count=len(corpus.documents),
        pair_count=len(corpus.gold),
        absent_count=sum(1 for row in corpus.gold if not row["present"]),
        contract_types=sorted({row.get("contract_type", "") for row in corpus.documents} - {""}),
        gold_sha256=sha256_of(folder / "gold.jsonl"),
        credit=corpus_credit(folder),
        problems=problems,
    )


def write_absent_only(source: Path, target: Path) -> Path:
    """A corpus folder holding only the absent pairs of ``source`` (the silent-source benchmark).

    documents.jsonl is copied, gold.jsonl filtered, pdf/ and txt/ linked (no copies of the PDFs).
    """
    source, target = Path(source).resolve(), Path(target)
    target.mkdir(parents=True, exist_ok=True)
    (target / "documents.jsonl").write_bytes((source / "documents.jsonl").read_bytes())
    with open(target / "gold.jsonl", "w", encoding="utf-8") as out:
        for row in read_jsonl(source / "gold.jsonl"):
            if not row["present"]:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    for name in ("pdf", "txt", "README.md"):
        link = target / name
        if (source / name).exists() and not link.exists():
            os.symlink(source / name, link)
    return target
