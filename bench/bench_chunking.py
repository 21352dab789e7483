"""Conversion and chunking speed; prints one JSON object.

Data: CUAD v1, The Atticus Project (CC BY 4.0) — contract PDFs from ../shared/eval/cuad-dev.

* ``conversion``: pages per second converting a fixed sample of the PDFs (every ``--every``-th
  document, ``--sample`` of them) with ``ingest.convert.convert_file`` (MarkItDown with our
  page-aware pypdfium2 converter registered), against MarkItDown's pdfminer path
  (``pdfminer.high_level.extract_text``, the one that keeps page breaks; markitdown's
  PdfConverter itself needs pdfplumber, which is not installed) on the same files as the
  baseline, plus how many pages each keeps (``"\\f"`` page breaks found vs physical pages).
* ``chunking``: MB of document text per second through ``ingest.chunker.chunk_document``
  over every converted document of the folder, best of ``--repeat`` runs, in CPU time (the
  machine is shared; wall time is reported too). Baseline: the naive chunker on the same texts,
  timed the same way (``fixed_size_chunks``: 2,000-character windows with the same 15% overlap,
  cut wherever the count falls, each with its pages), the fixed-size chunks that cut a clause in
  half; ``slowdown_vs_fixed_size_cpu`` (our CPU s / its CPU s; > 1: slower) is what cutting only
  at section, paragraph and sentence boundaries costs.

Usage: ``python bench/bench_chunking.py [--corpus DIR] [--sample 10] [--every 9] [--repeat 3]
[--no-baseline]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._cuad import CREDIT, CUAD  # noqa: E402
from bench._django import ratio  # noqa: E402
from ingest.chunker import DEFAULT_MAX_CHARS, chunk_document  # noqa: E402
from ingest.convert import convert_file  # noqa: E402
from ingest.pages import PageIndex  # noqa: E402

DEFAULT_CORPUS = CUAD


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def pages_kept(text: str, physical: int) -> int:
    """Pages a converter's text tells apart: its ``\\f``-separated parts, at most the document's
    physical pages (pdfminer ends every page with a ``\\f``, so its text has one part more)."""
    return min(text.count("\f") + 1, physical)


def bench_conversion(pdfs: list[Path], baseline: bool) -> dict:
    per_document = []
    kept = 0
    ours_wall = ours_cpu = 0.0
    for pdf in pdfs:
        converted, wall, cpu = _timed(lambda pdf=pdf: convert_file(pdf))
        ours_wall += wall
        ours_cpu += cpu
        per_document.append(len(converted.pages))
        kept += pages_kept(converted.text, len(converted.pages))
    pages = sum(per_document)
    result = {
        "documents": len(pdfs),
        "pages": pages,
        "ours": {
            "converter": "ingest.pdf_pages.PageAwarePdfConverter (pypdfium2) via MarkItDown",
            "pages_per_s_wall": round(pages / ours_wall, 1),
            "pages_per_s_cpu": round(pages / ours_cpu, 1),
            "pages_kept": kept,
        },
    }
    if baseline:
        from pdfminer.high_level import extract_text

        base_wall = base_cpu = 0.0
        base_kept = 0
        for pdf, physical in zip(pdfs, per_document):
            text, wall, cpu = _timed(lambda pdf=pdf: extract_text(str(pdf)))
            base_wall += wall
            base_cpu += cpu
            base_kept += pages_kept(text, physical)
        result["baseline"] = {
            "converter": "pdfminer.six extract_text (markitdown 0.1.8's pdfminer path)",
            "pages_per_s_wall": round(pages / base_wall, 2),
            "pages_per_s_cpu": round(pages / base_cpu, 2),
            "pages_kept": base_kept,
        }
        result["speedup_wall"] = round(base_wall / ours_wall, 1)
        result["speedup_cpu"] = round(base_cpu / ours_cpu, 1)
    return result


def fixed_size_chunks(
    text: str, pages, max_chars: int = DEFAULT_MAX_CHARS, overlap: float = 0.15
) -> list[tuple[int, int, int, int]]:
    """The baseline chunker: ``(start, end, first page, last page)`` windows of ``max_chars``
    characters, each repeating the last ``overlap`` share of the one before, cut wherever the
    count falls (mid-word, mid-sentence)."""
    index = PageIndex(pages)
    step = max(1, int(max_chars * (1 - overlap)))
    out = []
    for start in range(0, len(text), step):
        end = min(len(text), start + max_chars)
        out.append((start, end, index.page_of(start), index.page_of(end - 1)))
        if end == len(text):
            break
    return out


def _best_of(repeat: int, run) -> tuple[int, float, float]:
    """(chunks, best wall s, best CPU s) of ``repeat`` runs of ``run``."""
    best_cpu = best_wall = float("inf")
    chunks = 0
    for _ in range(repeat):
        chunks, wall, cpu = _timed(run)
        best_cpu, best_wall = min(best_cpu, cpu), min(best_wall, wall)
    return chunks, best_wall, best_cpu


def bench_chunking(pdfs: list[Path], repeat: int) -> dict:
    documents = [convert_file(pdf) for pdf in pdfs]
    chars = sum(len(d.text) for d in documents)
    chunks, best_wall, best_cpu = _best_of(
        repeat, lambda: sum(len(chunk_document(d.text, d.pages)) for d in documents)
    )
    base_chunks, base_wall, base_cpu = _best_of(
        repeat, lambda: sum(len(fixed_size_chunks(d.text, d.pages)) for d in documents)
    )
    return {
        "documents": len(documents),
        "text_mb": round(chars / 1e6, 2),
        "chunks": chunks,
        "mb_per_s_cpu": round(chars / 1e6 / best_cpu, 2),
        "mb_per_s_wall": round(chars / 1e6 / best_wall, 2),
        "baseline_fixed_size": {
            "chunks": base_chunks,
            "mb_per_s_cpu": round(chars / 1e6 / base_cpu, 2),
            "mb_per_s_wall": round(chars / 1e6 / base_wall, 2),
        },
        "slowdown_vs_fixed_size_cpu": ratio(best_cpu, base_cpu, 1),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--sample", type=int, default=10)
    parser.add_argument("--every", type=int, default=9)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args(argv)
    if not (args.corpus / "documents.jsonl").exists():
        result = {
            "bench": "chunking",
            "skipped": f"no corpus at {args.corpus} (the cuad-dev folder, see README.md)",
        }
        print(json.dumps(result, indent=2))
        return result

    documents = [json.loads(line) for line in open(args.corpus / "documents.jsonl", encoding="utf-8")]
    all_pdfs = [args.corpus / d["pdf"] for d in documents]
    sample = all_pdfs[:: args.every][: args.sample]
    result = {
        "data": CREDIT,
        "conversion": bench_conversion(sample, baseline=not args.no_baseline),
        "chunking": bench_chunking(all_pdfs, args.repeat),
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
