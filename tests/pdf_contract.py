"""A reviewable contract whose original is a real PDF (made here with fpdf2), converted and chunked by the
real converter and chunker, with clauses cited on it: for the page view (page images, glyph boxes).

``make_pdf_contract(engagement)`` writes the PDF into the document's file (MEDIA_ROOT), its Page and Chunk
rows, a run, and Extractions whose Citations are located in the converted text (quote == text[start:end]).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from fpdf import FPDF

FILLER = (
    "The parties have negotiated this Agreement at arm's length and each has had the benefit of counsel "
    "of its own choosing in doing so. "
)
PAGES = [
    [
        "MASTER SERVICES AGREEMENT",
        "This Master Services Agreement is made between Acme Components Inc. and Borealis Retail Ltd.",
        "1. Definitions. " + FILLER * 3,
        "2. Services. " + FILLER * 2,
    ],
    [
        "12. LIMITATION OF LIABILITY",
        "12.1 Exclusions. Neither party is liable for indirect or consequential losses of any kind. "
        + FILLER,
        "12.2 Cap on Liability. Each party's aggregate liability arising out of or relating to this Agreement "
        "shall not exceed $247,830.00 in any contract year. " + FILLER * 2,
        "13. Termination. " + FILLER * 2 + "Customer may terminate this Agreement for convenience",
    ],
    [
        "on forty-five (45) days' prior written notice to Provider. " + FILLER,
        "14. Review of the Cap. The cap in Section 12.2 is reviewed by the parties each contract year.",
        "18. Governing Law. This Agreement is governed by the laws of the State of Delaware, without regard "
        "to its conflict of laws rules.",
    ],
]
QUOTES = {
    # clause type: its quotes, words as written (the converted text may break its lines anywhere)
    "Cap On Liability": (
        "Each party's aggregate liability arising out of or relating to this Agreement shall not "
        "exceed $247,830.00 in any contract year",
        "The cap in Section 12.2 is reviewed by the parties each contract year",
    ),
    "Termination For Convenience": "Customer may terminate this Agreement for convenience on forty-five (45) "
    "days' prior written notice to Provider",
    "Governing Law": "governed by the laws of the State of Delaware",
}


@dataclass
class PdfContract:
    document: object
    data: bytes
    extractions: dict = field(default_factory=dict)  # clause type name -> Extraction
    citations: dict = field(default_factory=dict)  # clause type name -> [Citation], in order


def contract_pdf(*, labels: bool = False, huge_page: bool = False) -> bytes:
    """The contract as a PDF, one page per entry of ``PAGES``; ``labels``: pages numbered i, ii, iii in
    print; ``huge_page``: a fourth page of 200 x 200 inches."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for paragraphs in PAGES:
        pdf.add_page()
        if labels and pdf.page == 1:
            pdf.set_page_label(label_style="r")
        for para in paragraphs:
            pdf.multi_cell(0, 6, para)
            pdf.ln(4)
    if huge_page:
        pdf.add_page(format=(200 * 72, 200 * 72))
        pdf.set_font("Helvetica", size=200)
        pdf.multi_cell(0, 300, "Schedule of drawings. " + FILLER)
    return bytes(pdf.output())


def save_pages_and_chunks(document, text: str, pages) -> list:
    """The document's Page rows and its chunks (``ingest.chunker``, no embeddings), as the pipeline writes
    them; the chunks saved, in order."""
    from ingest.chunker import chunk_document
    from ingest.models import Chunk, Page

    Page.objects.bulk_create(
        [
            Page(document=document, number=p.number, char_start=p.char_start, char_end=p.char_end)
            for p in pages
        ]
    )
    return Chunk.objects.bulk_create(
        [
            Chunk(
                document=document,
                chunk_id=c.chunk_id,
                ordinal=c.ordinal,
                text=c.text,
                char_start=c.char_start,
                char_end=c.char_end,
                page_start=c.page_start,
                page_end=c.page_end,
                paragraph=c.paragraph,
                section=c.section,
            )
            for c in chunk_document(text, pages)
        ]
    )


def make_pdf_contract(
    engagement, *, title="PDF Services Agreement", data: bytes | None = None
) -> PdfContract:
    from django.core.files.base import ContentFile

    from extraction.models import Citation, Extraction, ExtractionRun
    from ingest.models import Document
    from ingest.pages import join_pages, page_of
    from ingest.pdf_pages import extract_pdf_pages
    from tests.factories import ensure_clause_types

    data = data or contract_pdf()
    text, pages = join_pages(extract_pdf_pages(data).pages)
    document = Document(
        engagement=engagement,
        original_name=f"{title}.pdf",
        sha256=hashlib.sha256(data).hexdigest(),
        size_bytes=len(data),
        title=title,
        doc_type="MSA",
        kind="pdf",
        status="ready",
        progress=100,
        text=text,
        page_count=len(pages),
    )
    document.file.save(f"{title}.pdf", ContentFile(data), save=False)
    document.save()
    chunks = save_pages_and_chunks(document, text, pages)
    types = ensure_clause_types(list(QUOTES))
    run = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
    out = PdfContract(document, data)
    for name, quotes in QUOTES.items():
        quotes = (quotes,) if isinstance(quotes, str) else quotes
        for ordinal, words in enumerate(quotes):
            found = re.search(r"\s+".join(re.escape(w) for w in words.split()), text)
            assert found, words
            start, end = found.span()
            chunk = next(c for c in chunks if c.char_start <= start < c.char_end)
            if ordinal == 0:
                out.extractions[name] = Extraction.objects.create(
                    run=run,
                    document=document,
                    clause_type=types[name],
                    status="found",
                    engine="offline",
                    model="offline-bm25",
                    clause_text=" … ".join(quotes),
                    dedupe_key=chunk.chunk_id,
                )
            citation = Citation.objects.create(
                extraction=out.extractions[name],
                chunk=chunk,
                ordinal=ordinal,
                page=page_of(start, pages),
                start=start,
                end=end,
                quote=text[start:end],
            )
            out.citations.setdefault(name, []).append(citation)
    return out


def not_found_pointing_at(contract, quote_of: str, type_name: str = "Non-Compete"):
    """A not_found whose closest sentence is the first quote of ``quote_of`` (as the offline engine keeps it)."""
    from extraction.models import Extraction
    from tests.factories import ensure_clause_types

    near = contract.citations[quote_of][0]
    run = contract.extractions[quote_of].run
    return Extraction.objects.create(
        run=run,
        document=contract.document,
        clause_type=ensure_clause_types([type_name])[type_name],
        status="not_found",
        engine="offline",
        dedupe_key="not_found",
        confidence=0.93,
        closest={
            "chunk_id": near.chunk.chunk_id,
            "page": near.page,
            "start": near.start,
            "end": near.end,
            "quote": near.quote,
        },
    )
