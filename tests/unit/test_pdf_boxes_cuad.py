"""On real contracts (CUAD v1 PDFs filed with the SEC, The Atticus Project, CC BY 4.0): the glyph boxes of
lawyer-labelled spans hold exactly those spans' words, read back by pdfium from inside each box."""

from __future__ import annotations

import json
import re

from ingest.pages import join_pages
from ingest.pdf_boxes import PageSlice, span_boxes
from ingest.pdf_pages import extract_pdf_pages, open_with_forms
from tests.unit.test_pdf_boxes import read_inside, same

CONTRACTS = 5  # the first ones of documents.jsonl
MIN_SHARE = 0.98


def test_boxes_of_labelled_spans_on_real_contracts_hold_the_spans_words(cuad_dir, capsys):
    documents = [json.loads(line) for line in (cuad_dir / "documents.jsonl").open()][:CONTRACTS]
    gold = [json.loads(line) for line in (cuad_dir / "gold.jsonl").open()]
    exact = checked = 0
    misses = []
    for row in documents:
        data = (cuad_dir / row["pdf"]).read_bytes()
        text, spans = join_pages(extract_pdf_pages(data).pages)
        pages = [PageSlice(s.number, s.char_start, text[s.char_start : s.char_end]) for s in spans]
        pdf = open_with_forms(data)
        try:
            parts = {
                p["text"] for g in gold if g["doc"] == row["doc"] for s in g["spans"] for p in s["parts"]
            }
            for part in sorted(parts):
                found = (
                    re.search(r"\s+".join(re.escape(w) for w in part.split()), text) if part.split() else None
                )
                if found is None:  # CUAD's text differs from the PDF's here (a page header inside the span)
                    continue
                boxes = span_boxes(pdf, found.start(), found.end(), pages)[1]
                checked += 1
                if same("".join(read_inside(pdf, b) for b in boxes), found.group(0)):
                    exact += 1
                else:
                    misses.append((row["doc"][:40], found.group(0)[:80]))
        finally:
            pdf.close()
    share = exact / checked
    with capsys.disabled():
        print(
            f"\nglyph boxes on {CONTRACTS} CUAD contracts: {exact}/{checked} spans read back exactly ({share:.1%})"
        )
    assert checked >= 50 and share >= MIN_SHARE, misses[:5]
