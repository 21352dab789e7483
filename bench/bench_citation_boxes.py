"""Every citation of an ``evaluate`` run, on the original PDF page: do its highlight boxes hold the quote?

For each citation of the run on a PDF (the boxes an auditor sees: ``ingest.page_view.span_boxes_json``, what
``/documents/<id>/boxes`` serves), pdfium reads the text inside each box on its own (``get_text_bounded``,
the box drawn in a little as ``tests/unit/test_pdf_boxes.read_inside`` does, so a neighbour line's glyph
that touches the edge is not read), and the boxes' text is compared with the stored quote, whitespace,
pdfium's line-break hyphen and Unicode forms aside (``tests/unit/test_pdf_boxes.same``).

* ``exact_share``: citations whose boxes read back as the quote (target 1.00);
  ``differ_only_in_dashes_or_underscores``: those that would with dashes and underscores aside (see ``BLANKS``);
* ``no_boxes``: citations with no box at all; ``misses``: the first 15 that differ, with what was read;
* ``boxes_ms``: computing one citation's boxes (p50/p95; cache cleared first, so the cold cost).

Runs on the database named by ``EMBEDDED_DIR``/``MEDIA_ROOT`` (an ``evaluate`` run's): ``--run N`` or the
latest run with citations. Data there: CUAD v1, The Atticus Project (CC BY 4.0).

Usage: ``python -m bench.bench_citation_boxes [--run N]``  (prints one JSON object)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CREDIT = "CUAD v1, The Atticus Project (CC BY 4.0)"
MISSES_SHOWN = 15
# Dashes and underscores: pdfium's bounded read drops a hyphen it takes for a line-break one, and a blank
# drawn as underscores lies below the drawn-in box; such misses are counted apart.
BLANKS = re.compile(r"[-_\u00ad]+")


def first_difference(read: str, quote: str) -> int:
    """Where, in ``quote``, the read text first differs (whitespace aside): to show a miss where it is."""
    at = i = j = 0
    while i < len(read) and j < len(quote):
        if read[i].isspace():
            i += 1
        elif quote[j].isspace():
            j += 1
        elif read[i] == quote[j]:
            i, j, at = i + 1, j + 1, j + 1
        else:
            break
    return at


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=int, help="the extraction run (default: the latest with citations)")
    args = parser.parse_args(argv)
    from bench._django import bench_django, percentiles

    with bench_django("citation-boxes"):
        import pypdfium2 as pdfium
        from django.core.cache import cache

        from extraction.models import Citation, ExtractionRun
        from ingest.page_view import _open, span_boxes_json
        from ingest.pdf_boxes import Box
        from tests.unit.test_pdf_boxes import read_inside, same

        runs = ExtractionRun.objects.filter(extractions__citations__isnull=False).distinct().order_by("-pk")
        run = runs.filter(pk=args.run).first() if args.run else runs.first()
        if run is None:
            result = {"bench": "citation_boxes", "skipped": "no run with citations in this database"}
            print(json.dumps(result, indent=2))
            return result
        citations = (
            Citation.objects.filter(extraction__run=run, extraction__document__kind="pdf")
            .select_related("extraction__document")
            .order_by("extraction__document_id", "start")
        )
        cache.clear()
        exact = no_boxes = blanks = 0
        misses: list[dict] = []
        timings: list[float] = []
        documents: set[int] = set()
        pdfs: dict[int, pdfium.PdfDocument] = {}
        for citation in citations:
            document = citation.extraction.document
            documents.add(document.pk)
            started = time.perf_counter()
            boxes = span_boxes_json(document, citation.start, citation.end)["boxes"]
            timings.append(1000 * (time.perf_counter() - started))
            if not boxes:
                no_boxes += 1
                continue
            pdf = pdfs.get(document.pk)
            if pdf is None:
                for old in pdfs.values():
                    old.close()
                pdfs = {document.pk: (pdf := _open(document))}
            read = "".join(read_inside(pdf, Box(**box)) for box in boxes)
            if same(read, citation.quote):
                exact += 1
                continue
            if same(BLANKS.sub("", read), BLANKS.sub("", citation.quote)):
                blanks += 1
            elif len(misses) < MISSES_SHOWN:
                at = first_difference(read, citation.quote)
                misses.append(
                    {
                        "document": document.title[:50],
                        "quote_at_difference": citation.quote[max(0, at - 30) : at + 50],
                        "read_at_difference": read[max(0, at - 30) : at + 50],
                    }
                )
        for pdf in pdfs.values():
            pdf.close()
        checked = len(timings)
        result = {
            "bench": "citation_boxes",
            "credit": CREDIT,
            "run": run.pk,
            "engine": run.engine,
            "documents": len(documents),
            "citations": checked,
            "exact": exact,
            "exact_share": round(exact / checked, 4) if checked else None,
            "differ_only_in_dashes_or_underscores": blanks,
            "no_boxes": no_boxes,
            "boxes_ms": percentiles(timings) if timings else None,
            "misses": misses,
        }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
