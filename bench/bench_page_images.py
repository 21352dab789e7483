"""The page view of a PDF original: drawing a page image, serving it again, and a citation's glyph boxes.

A ``--pages``-page contract (contract prose, about 3,000 characters a page) is written as a PDF with fpdf2,
converted by the real converter and stored as a document of an engagement. Through the real views, as a
signed-in auditor (session, scoping, the file served):

* ``first_render``: each of ``--samples`` pages, spread over the document, drawn at the viewer's width
  (800 px) for the first time (nothing in the image folder);
* ``cached``: the same pages asked again (the PNG from the folder);
* ``boxes``: the glyph boxes of a sentence on each of those pages, computed (a fresh cache holds none), as
  ``ingest.page_view.span_boxes_json`` does for a citation's JSON; ``boxes_cached``: asked again;
* baseline, same run: each of those pages as text, the review page's text view of it (the fragment
  ``document-page`` answers htmx with), what the reviewer was shown before the page view.
  ``vs_text_page`` is each figure's p50 and p95 over the baseline's (> 1: slower).

Targets on 2 cores: first render p95 <= 150 ms, cached p95 <= 10 ms, boxes p95 <= 20 ms.

Usage: ``python -m bench.bench_page_images [--pages 200] [--samples 60]``  (prints one JSON object)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._django import bench_django, percentiles, ratio  # noqa: E402

T = TypeVar("T")
TARGETS_MS = {"first_render_p95": 150, "cached_p95": 10, "boxes_p95": 20}


def contract_pdf(pages: int) -> bytes:
    from fpdf import FPDF

    from demo.prose import LegalProse

    prose = LegalProse(11)
    pdf = FPDF()
    pdf.set_font("Helvetica", size=10)
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.cell(0, 6, f"MASTER SERVICES AGREEMENT - page {number}", new_x="LMARGIN", new_y="NEXT")
        written = 0
        while written < 3000:
            paragraph = prose.paragraph()
            pdf.multi_cell(0, 5, paragraph)
            pdf.ln(2)
            written += len(paragraph)
            if pdf.get_y() > 250:
                break
    return bytes(pdf.output())


def stored_document(data: bytes):
    import hashlib

    from django.contrib.auth.models import User
    from django.core.files.base import ContentFile

    from engagements.models import Engagement, Membership
    from ingest.models import Document, Page
    from ingest.pages import join_pages
    from ingest.pdf_pages import extract_pdf_pages

    text, pages = join_pages(extract_pdf_pages(data).pages)
    engagement = Engagement.objects.create(name="Bench audit", client="Bench")
    user = User.objects.create_user("bench-auditor", password="bench-pw-1")
    Membership.objects.create(user=user, engagement=engagement, role="auditor")
    document = Document(
        engagement=engagement,
        original_name="bench.pdf",
        sha256=hashlib.sha256(data).hexdigest(),
        size_bytes=len(data),
        title="Bench contract",
        kind="pdf",
        status="ready",
        progress=100,
        text=text,
        page_count=len(pages),
    )
    document.file.save("bench.pdf", ContentFile(data), save=False)
    document.save()
    Page.objects.bulk_create(
        [
            Page(document=document, number=p.number, char_start=p.char_start, char_end=p.char_end)
            for p in pages
        ]
    )
    return user, document, pages


def timed(call: Callable[[], T]) -> tuple[float, T]:
    began = time.perf_counter()
    result = call()
    return (time.perf_counter() - began) * 1000, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--samples", type=int, default=60)
    args = parser.parse_args()
    with bench_django("page_images"):
        from django.test import Client
        from django.urls import reverse

        from ingest import page_view, pdf_render

        started = time.perf_counter()
        data = contract_pdf(args.pages)
        user, document, pages = stored_document(data)
        setup_s = time.perf_counter() - started
        client = Client(HTTP_HOST="127.0.0.1")
        client.force_login(user)
        step = max(1, len(pages) // args.samples)
        sample = [p.number for p in pages[::step]][: args.samples]

        def image(number: int) -> bytes:
            response = client.get(reverse("page-image", args=[document.pk, number, 800]))
            assert response.status_code == 200, response.status_code
            return b"".join(response.streaming_content)  # type: ignore[attr-defined]  # a FileResponse

        # warm-up, outside the figures: code paths and connections, the image folder's first sweep
        warm = next(n for n in range(1, len(pages) + 1) if n not in sample) if len(sample) < len(pages) else 1
        assert client.get(reverse("page-image", args=[document.pk, warm, 1200])).status_code == 200
        page_view.span_boxes_json(document, pages[warm - 1].char_start, pages[warm - 1].char_start + 40)
        first, sizes = [], []
        for number in sample:
            ms, png = timed(partial(image, number))
            first.append(ms)
            sizes.append(len(png))
        cached = [timed(partial(image, number))[0] for number in sample]

        text = document.text
        spans = []
        for number in sample:
            span = pages[number - 1]
            found = re.search(r"[A-Z][^.\f]{60,400}\.", text[span.char_start : span.char_end])
            if found:
                spans.append((span.char_start + found.start(), span.char_start + found.end()))
        boxes, counts = [], []
        for start, end in spans:
            ms, result = timed(partial(page_view.span_boxes_json, document, start, end))
            boxes.append(ms)
            counts.append(len(result["boxes"]))
        boxes_cached = [timed(partial(page_view.span_boxes_json, document, s, e))[0] for s, e in spans]

        def text_page(number: int) -> None:
            response = client.get(
                reverse("document-page", args=[document.pk, number]), HTTP_HX_REQUEST="true"
            )
            assert response.status_code == 200

        text_page(sample[0])  # warm-up: templates loaded, as for the images before
        baseline = percentiles([timed(partial(text_page, number))[0] for number in sample])

        figures = {
            "first_render": percentiles(first),
            "cached": percentiles(cached),
            "boxes": percentiles(boxes),
            "boxes_cached": percentiles(boxes_cached),
        }
        print(
            json.dumps(
                {
                    "bench": "page_images",
                    "pages": len(pages),
                    "samples": len(sample),
                    "width_px": 800,
                    "png_kb_mean": round(sum(sizes) / len(sizes) / 1024, 1),
                    "boxes_per_sentence_mean": round(sum(counts) / max(len(counts), 1), 1),
                    "setup_s": round(setup_s, 1),
                    **figures,
                    "baseline_text_page": baseline,
                    "vs_text_page": {
                        name: {
                            "p50": ratio(f["p50_ms"], baseline["p50_ms"]),
                            "p95": ratio(f["p95_ms"], baseline["p95_ms"]),
                        }
                        for name, f in figures.items()
                    },
                    "targets_ms": TARGETS_MS,
                    "within_targets": {
                        "first_render_p95": figures["first_render"]["p95_ms"]
                        <= TARGETS_MS["first_render_p95"],
                        "cached_p95": figures["cached"]["p95_ms"] <= TARGETS_MS["cached_p95"],
                        "boxes_p95": figures["boxes"]["p95_ms"] <= TARGETS_MS["boxes_p95"],
                    },
                    "pixel_budget": pdf_render.PIXEL_BUDGET,
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
