"""A short contract written straight into the database (text, pages, chunks), with known clauses.

Under 12,000 characters, so the Claude engine gets it whole (no retrieval, no embedding model).
"""

from __future__ import annotations

import hashlib
import time

PAGES = [
    [
        "MASTER SUPPLY AGREEMENT",
        "This Master Supply Agreement is entered into as of March 3, 2021 between Acme Components Inc. "
        '("Supplier") and Borealis Retail Ltd. ("Customer").',
        "1. Term. This Agreement starts on the Effective Date and continues for three (3) years.",
    ],
    [
        "2. Fees. Customer shall pay Supplier a unit fee of $247.83 per pallet, invoiced monthly and payable "
        "within thirty (30) days of the invoice date under customer account cust_4711.",
        "3. Cap on Liability. Each party's aggregate liability under this Agreement shall not exceed "
        "$247,830.00, except for breaches of confidentiality.",
    ],
    [
        "4. Governing Law. This Agreement is governed by the laws of the State of Delaware, without regard to "
        "its conflict of laws rules.",
        "5. Termination for Convenience. Customer may terminate this Agreement for convenience on forty-five "
        "(45) days' prior written notice to Supplier.",
        "6. Assignment. Neither party may assign this Agreement without the prior written consent of the "
        "other party, which shall not be unreasonably withheld.",
    ],
]

ANSWERS = {
    "Payment": "Customer shall pay Supplier a unit fee of $247.83 per pallet",
    "Cap On Liability": "Each party's aggregate liability under this Agreement shall not exceed $247,830.00",
    "Governing Law": "This Agreement is governed by the laws of the State of Delaware",
    "Termination For Convenience": "Customer may terminate this Agreement for convenience on forty-five (45) "
    "days' prior written notice to Supplier.",
    "Anti-Assignment": "Neither party may assign this Agreement without the prior written consent of the other party",
    "Non-Compete": None,
    "Insurance": None,
}
PAGE_OF = {
    "Payment": 2,
    "Cap On Liability": 2,
    "Governing Law": 3,
    "Termination For Convenience": 3,
    "Anti-Assignment": 3,
}
TYPES = list(ANSWERS)


def make_contract(engagement, title: str = "Master Supply Agreement", *, doc_type: str = "Supply"):
    from ingest.models import Chunk, Document, Page

    text, page_spans, paras = "", [], []
    for number, paragraphs in enumerate(PAGES, 1):
        if number > 1:
            text += "\f"
        start = len(text)
        for i, para in enumerate(paragraphs):
            if i:
                text += "\n\n"
            paras.append((number, len(text), para))
            text += para
        page_spans.append((number, start, len(text)))
    document = Document.objects.create(
        engagement=engagement,
        file="",
        original_name=f"{title}.pdf",
        title=title,
        doc_type=doc_type,
        kind="pdf",
        sha256=hashlib.sha256(f"{engagement.pk}:{title}".encode()).hexdigest(),
        size_bytes=len(text),
        status="ready",
        progress=100,
        text=text,
        page_count=len(PAGES),
    )
    Page.objects.bulk_create(
        [Page(document=document, number=n, char_start=s, char_end=e) for n, s, e in page_spans]
    )
    Chunk.objects.bulk_create(
        [
            Chunk(
                document=document,
                chunk_id="c" + hashlib.sha1(para.encode()).hexdigest()[:15],
                ordinal=i,
                text=para,
                char_start=s,
                char_end=s + len(para),
                page_start=page,
                page_end=page,
                paragraph=i,
                section=para.split(".")[0] if para[0].isdigit() else "",
            )
            for i, (page, s, para) in enumerate(paras)
        ]
    )
    return document


def write_contract_pdf(path) -> None:
    """The same contract as a real 3-page PDF, one page per entry of ``PAGES`` (for the ingest pipeline)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for paragraphs in PAGES:
        pdf.add_page()
        for para in paragraphs:
            pdf.multi_cell(0, 6, para)
            pdf.ln(4)
    pdf.output(str(path))


def clause_types(names=TYPES):
    from extraction.catalog.sync import ensure_catalog
    from extraction.models import ClauseType

    ensure_catalog()
    rows = {t.name: t for t in ClauseType.objects.filter(name__in=names)}
    return [rows[n] for n in names]


def wait_until(predicate, timeout: float, what: str, worker=None) -> None:
    """Poll ``predicate`` until it holds; on timeout fail naming ``what`` (with the worker's log tail)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}\n{worker.log_tail() if worker else ''}")
