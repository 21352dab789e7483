"""The page view of a DOCX original through LibreOffice: laying it out as a PDF, then its pages as images.

A ``--pages``-page DOCX (contract prose, about 1,500 characters, a page of LibreOffice's layout, and a hard page break after each) is
written with python-docx, converted by the real converter and stored as a document of an engagement.

* ``convert``: ``soffice --convert-to pdf`` of the original (``ingest.office_pdf.convert_to_pdf``), with a
  new profile (``cold_profile_s``: LibreOffice makes its profile first) and then ``--repeat`` times with
  that profile kept (``warm_s``, median); ``s_per_page``: warm seconds per page LibreOffice laid out;
* through the real views, as a signed-in auditor: ``first_page_image_ms``, the first image of the document
  (nothing kept: the layout, both texts folded, the page drawn); ``first_render``: each of ``--samples``
  citations' pages drawn for the first time (the PDF kept); ``cached``: the same images asked again;
  ``boxes``: each citation's boxes located and computed (``located_share``: found on LibreOffice's text);
* baseline, same run: the same pages as text (the review page's text view, ``document-page``).

Usage: ``python -m bench.bench_office_pages [--pages 20] [--samples 10] [--repeat 3]``  (one JSON object)
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._django import bench_django, percentiles, ratio  # noqa: E402


def contract_docx(pages: int) -> bytes:
    import docx
    from docx.enum.text import WD_BREAK

    from demo.prose import LegalProse

    prose = LegalProse(11)
    document = docx.Document()
    for number in range(1, pages + 1):
        document.add_heading(f"{number}. Article {number}", 1)
        written = 0
        while written < 1500:
            paragraph = prose.paragraph()
            document.add_paragraph(paragraph)
            written += len(paragraph)
        if number < pages:
            document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def stored_document(data: bytes):
    from django.contrib.auth.models import User
    from django.core.files.base import ContentFile

    from engagements.models import Engagement, Membership
    from ingest.convert import convert_file
    from ingest.models import Document, Page

    with tempfile.TemporaryDirectory() as work:
        source = Path(work) / "bench.docx"
        source.write_bytes(data)
        converted = convert_file(source)
    engagement = Engagement.objects.create(name="Bench audit", client="Bench")
    user = User.objects.create_user("bench-auditor", password="bench-pw-1")
    Membership.objects.create(user=user, engagement=engagement, role="auditor")
    document = Document(
        engagement=engagement,
        original_name="bench.docx",
        sha256=hashlib.sha256(data).hexdigest(),
        size_bytes=len(data),
        title="Bench contract",
        kind="docx",
        status="ready",
        progress=100,
        text=converted.text,
        page_count=len(converted.pages),
        pages_estimated=converted.pages_estimated,
    )
    document.file.save("bench.docx", ContentFile(data), save=False)
    document.save()
    Page.objects.bulk_create(
        [
            Page(document=document, number=p.number, char_start=p.char_start, char_end=p.char_end)
            for p in converted.pages
        ]
    )
    return user, document, converted.pages


def ms_of(call) -> tuple[float, object]:
    began = time.perf_counter()
    result = call()
    return (time.perf_counter() - began) * 1000, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with bench_django("office_pages"):
        import pypdfium2 as pdfium
        from django.test import Client
        from django.urls import reverse

        from ingest import office_pdf, page_view

        if office_pdf.soffice() is None:
            print(
                json.dumps({"bench": "office_pages", "skipped": "LibreOffice is not installed (make office)"})
            )
            return
        data = contract_docx(args.pages)
        with tempfile.TemporaryDirectory() as profiles:
            cold_ms, pdf_bytes = ms_of(lambda: office_pdf.convert_to_pdf(data, "docx", Path(profiles)))
            warm = [
                ms_of(lambda: office_pdf.convert_to_pdf(data, "docx", Path(profiles)))[0]
                for _ in range(args.repeat)
            ]
        laid_out = len(pdfium.PdfDocument(pdf_bytes))
        warm_s = statistics.median(warm) / 1000

        user, document, pages = stored_document(data)
        client = Client(HTTP_HOST="127.0.0.1")
        client.force_login(user)

        def image(number: int) -> None:
            response = client.get(reverse("page-image", args=[document.pk, number, 800]))
            assert response.status_code == 200, response.status_code
            b"".join(response.streaming_content)  # type: ignore[attr-defined]  # a FileResponse

        step = max(1, len(pages) // args.samples)
        sample = [p.number for p in pages[::step]][: args.samples]
        first_ms, _ = ms_of(lambda: image(sample[0]))  # lays the document out, folds both texts, draws
        first = [ms_of(lambda n=n: image(n))[0] for n in sample[1:]]
        cached = [ms_of(lambda n=n: image(n))[0] for n in sample]

        spans = []
        for number in sample:
            span = pages[number - 1]
            found = re.search(r"[A-Z][^.\f]{60,400}\.", document.text[span.char_start : span.char_end])
            if found:
                spans.append((span.char_start + found.start(), span.char_start + found.end()))
        boxes, located = [], 0
        for start, end in spans:
            ms, result = ms_of(lambda s=start, e=end: page_view.span_boxes_json(document, s, e))
            boxes.append(ms)
            located += all(f["located"] for f in result["pages"]) and bool(result["boxes"])

        def text_page(number: int) -> None:
            response = client.get(
                reverse("document-page", args=[document.pk, number]), HTTP_HX_REQUEST="true"
            )
            assert response.status_code == 200

        text_page(sample[0])
        baseline = percentiles([ms_of(lambda n=n: text_page(n))[0] for n in sample])
        figures = {
            "first_render": percentiles(first),
            "cached": percentiles(cached),
            "boxes": percentiles(boxes),
        }
        print(
            json.dumps(
                {
                    "bench": "office_pages",
                    "kind": "docx",
                    "pages_written": args.pages,
                    "pages_ours": len(pages),
                    "pages_estimated": document.pages_estimated,
                    "pages_libreoffice": laid_out,
                    "convert": {
                        "cold_profile_s": round(cold_ms / 1000, 2),
                        "warm_s": round(warm_s, 2),
                        "s_per_page": round(warm_s / max(laid_out, 1), 3),
                        "repeat": args.repeat,
                    },
                    "first_page_image_ms": round(first_ms, 1),
                    **figures,
                    "located_share": round(located / max(len(spans), 1), 3),
                    "citations": len(spans),
                    "baseline_text_page": baseline,
                    "cached_vs_text_page_p95": ratio(figures["cached"]["p95_ms"], baseline["p95_ms"]),
                    "convert_timeout_s": office_pdf.CONVERT_TIMEOUT,
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
