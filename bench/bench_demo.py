"""Demo contract generator speed: ``demo.make_contract_pdf`` writing a ``--pages``-page contract PDF.

The generator lays out every page itself so that each planted clause lands on a known page (the truth the
demo benchmark set is scored against); timed ``--repeat`` times (p50/p95, and pages per second).

Baseline, same run: the same text (the generated PDF's own page texts, read back with pypdfium2) written
with fpdf2 alone in the same font, size and margins, one ``multi_cell`` per page and fpdf2's automatic page
breaks: what producing that many pages of PDF costs with no placement at all. ``speedup_vs_plain_fpdf2``
is the baseline's p50 and p95 over the generator's (> 1: the generator is faster; it measures each line
itself where ``multi_cell`` wraps a whole page of text).

Usage: ``python -m bench.bench_demo [--pages 200] [--repeat 3]``  (prints one JSON object)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._django import speedup, timed_repeats  # noqa: E402


def page_texts(path: Path) -> list[str]:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(path))
    try:
        return [doc[i].get_textpage().get_text_range().replace("\r\n", "\n") for i in range(len(doc))]
    finally:
        doc.close()


def plain_pdf(path: Path, texts: list[str]) -> int:
    """``texts`` written with fpdf2 alone (latin-1, as its core fonts take); returns the pages written."""
    from fpdf import FPDF

    from demo.contracts import BODY_SIZE, FONT, LINE_H, MARGIN_BOTTOM, MARGIN_TOP, MARGIN_X

    pdf = FPDF(format="letter")
    pdf.set_margins(MARGIN_X, MARGIN_TOP, MARGIN_X)
    pdf.set_auto_page_break(True, MARGIN_BOTTOM)
    pdf.set_font(FONT, "", BODY_SIZE)
    for text in texts:
        pdf.add_page()
        pdf.multi_cell(0, LINE_H, text.encode("latin-1", "replace").decode("latin-1"))
    pdf.output(str(path))
    return pdf.page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from demo import make_contract_pdf

    with tempfile.TemporaryDirectory() as folder:
        contract, plain = Path(folder) / "contract.pdf", Path(folder) / "plain.pdf"
        generator, truth = timed_repeats(
            lambda: make_contract_pdf(contract, pages=args.pages, seed=0), args.repeat
        )
        texts = page_texts(contract)
        baseline, plain_pages = timed_repeats(lambda: plain_pdf(plain, texts), args.repeat)
    print(
        json.dumps(
            {
                "bench": "demo_contract",
                "pages": truth.pages,
                "words": truth.words,
                "planted_clauses": len(truth.clauses),
                "generator": {
                    **generator,
                    "pages_per_s_p50": round(truth.pages / generator["p50_ms"] * 1000, 1),
                },
                "baseline_plain_fpdf2": {**baseline, "pages": plain_pages},
                "speedup_vs_plain_fpdf2": speedup(baseline, generator),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
