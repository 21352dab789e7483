"""Conversion and chunking speed; prints one JSON object.

Data: CUAD v1, The Atticus Project (CC BY 4.0) — contract PDFs from ../shared/eval/cuad-dev.

* ``conversion``: pages per second converting a fixed sample of the PDFs (every ``--every``-th
  document, ``--sample`` of them) with ``ingest.convert.convert_file`` (MarkItDown with our
  page-aware pypdfium2 converter registered), against MarkItDown's default PDF path
  (pdfminer) on the same files as the baseline, plus how many pages each keeps
  (``"\\f"`` page breaks found vs physical pages).
* ``chunking``: MB of document text per second through ``ingest.chunker.chunk_document``
  over every converted document of the folder, best of ``--repeat`` runs, in CPU time (the
  machine is shared; wall time is reported too).

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

from ingest.chunker import chunk_document  # noqa: E402
from bench._cuad import CREDIT, CUAD  # noqa: E402
from ingest.convert import convert_file  # noqa: E402

DEFAULT_CORPUS = CUAD


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def bench_conversion(pdfs: list[Path], baseline: bool) -> dict:
    pages = 0
    kept = 0
    ours_wall = ours_cpu = 0.0
    for pdf in pdfs:
        converted, wall, cpu = _timed(lambda: convert_file(pdf))
        ours_wall += wall
        ours_cpu += cpu
        pages += len(converted.pages)
        kept += converted.text.count("\f") + 1
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
        from markitdown import MarkItDown

        md = MarkItDown()
        base_wall = base_cpu = 0.0
        base_kept = 0
        for pdf in pdfs:
            out, wall, cpu = _timed(lambda: md.convert(str(pdf)))
            base_wall += wall
            base_cpu += cpu
            base_kept += min(out.markdown.count("\f") + 1, pages)
        result["baseline"] = {
            "converter": "markitdown 0.1.8 default PdfConverter (pdfminer/pdfplumber)",
            "pages_per_s_wall": round(pages / base_wall, 2),
            "pages_per_s_cpu": round(pages / base_cpu, 2),
            "pages_kept": base_kept,
        }
        result["speedup_wall"] = round(base_wall / ours_wall, 1)
        result["speedup_cpu"] = round(base_cpu / ours_cpu, 1)
    return result


def bench_chunking(pdfs: list[Path], repeat: int) -> dict:
    documents = [convert_file(pdf) for pdf in pdfs]
    chars = sum(len(d.text) for d in documents)
    best_cpu = best_wall = float("inf")
    chunks = 0
    for _ in range(repeat):
        def run():
            return sum(len(chunk_document(d.text, d.pages)) for d in documents)

        chunks, wall, cpu = _timed(run)
        best_cpu, best_wall = min(best_cpu, cpu), min(best_wall, wall)
    return {
        "documents": len(documents),
        "text_mb": round(chars / 1e6, 2),
        "chunks": chunks,
        "mb_per_s_cpu": round(chars / 1e6 / best_cpu, 2),
        "mb_per_s_wall": round(chars / 1e6 / best_wall, 2),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--sample", type=int, default=10)
    parser.add_argument("--every", type=int, default=9)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args(argv)

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
