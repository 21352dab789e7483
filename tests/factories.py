"""Review fixtures built straight into the database (no ingest pipeline, no extraction engine).

``make_reviewable(engagement)`` writes a several-page contract (real contract prose from
``demo.prose``, planted clauses with exact values, one paragraph that contains HTML), its
Page and Chunk rows, a run, and Extractions with verified Citations (quote == text[start:end]).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from demo.prose import LegalProse

PLANTED = {
    # clause type: (page, paragraph text, quoted span inside it or None for the whole paragraph)
    "Payment": (
        2,
        "4.2 Fees. Customer shall pay Provider a unit fee of $247.83 per processed record, invoiced "
        "monthly in arrears and payable net 30 from the date of a correct invoice.",
        "a unit fee of $247.83 per processed record",
    ),
    "Cap On Liability": (
        3,
        "12.1 Cap on Liability. Except for the Excluded Claims, each Party's aggregate liability "
        "arising out of or relating to this Agreement shall not exceed $247,830.00.",
        None,
    ),
    "Cap On Liability#2": (
        4,
        "12.3 Application of the Cap. The limitation in Section 12.1 applies in the aggregate "
        "to all claims, whether in contract, tort (including negligence) or otherwise.",
        "applies in the aggregate to all claims",
    ),
    "Termination For Convenience": (
        4,
        "15.2 Termination for Convenience. Customer may terminate this Agreement "
        "for convenience on forty-five (45) days' prior written notice to Provider.",
        None,
    ),
    "Governing Law": (
        5,
        "18.4 Governing Law. This Agreement is governed by the laws of the State of Delaware, "
        "without regard to its conflict of laws rules.",
        "governed by the laws of the State of Delaware",
    ),
    "Other": (
        5,
        'Exhibit C note. The portal banner reads <script>alert("pwned")</script> and <b>Bold & "quoted"</b> '
        "text; it must be shown as typed, never run.",
        '<script>alert("pwned")</script> and <b>Bold & "quoted"</b>',
    ),
}
TYPES = (
    "Payment",
    "Cap On Liability",
    "Termination For Convenience",
    "Governing Law",
    "Other",
    "Non-Compete",
    "Insurance",
)


@dataclass
class Reviewable:
    document: object
    pages: list = field(default_factory=list)
    chunks: list = field(default_factory=list)
    extractions: dict = field(default_factory=dict)  # clause type name -> Extraction
    citations: dict = field(default_factory=dict)  # clause type name -> [Citation]


def contract_text(
    pages: int = 6, seed: int = 0
) -> tuple[str, list[tuple[int, int]], list[tuple[int, int, int, str]]]:
    """(text, [(page start, end)], [(page, start, end, paragraph)]) with pages joined by form feeds."""
    prose = LegalProse(seed)
    planted_by_page: dict[int, list[str]] = {}
    for _name, (page, paragraph, _) in PLANTED.items():
        planted_by_page.setdefault(page, []).append(paragraph)
    text, ranges, paragraphs = "", [], []
    for number in range(1, pages + 1):
        if number > 1:
            text += "\f"
        start = len(text)
        body = [f"MASTER SERVICES AGREEMENT No. MSA-2024-0117 — page {number}"]
        body += [prose.paragraph() for _ in range(2)]
        body += planted_by_page.get(number, [])
        body += [prose.paragraph() for _ in range(2)]
        for para in body:
            if text and len(text) > start:
                text += "\n\n"
            p_start = len(text)
            text += para
            paragraphs.append((number, p_start, len(text), para))
        ranges.append((start, len(text)))
    return text, ranges, paragraphs


def _section(paragraph: str) -> str:
    """'18.4 Governing Law. This …' -> 'Section 18.4 Governing Law' (what the chunker records)."""
    number, _, rest = paragraph.partition(" ")
    if not number[:1].isdigit():
        return ""
    return f"Section {number} {rest.split('.')[0]}"[:120]


def ensure_clause_types(names=TYPES):
    """The catalog rows for ``names``: the seeded catalog, restored after a transactional test's flush."""
    from django.utils.text import slugify

    from extraction.catalog.sync import ensure_catalog
    from extraction.models import ClauseType

    ensure_catalog()

    out = {}
    for name in names:
        out[name] = ClauseType.objects.filter(name=name).first() or ClauseType.objects.create(
            name=name, slug=slugify(name), description=f"The {name} clause.", query=name, source="custom"
        )
    return out


def make_document(engagement, *, title="Master Services Agreement", pages=6, seed=0, status="ready", **extra):
    from ingest.models import Chunk, Document, Page

    text, ranges, paragraphs = contract_text(pages, seed)
    document = Document.objects.create(
        engagement=engagement,
        file="",
        original_name=f"{title}.pdf",
        sha256=hashlib.sha256(f"{engagement.pk}:{title}:{seed}".encode()).hexdigest(),
        size_bytes=len(text),
        title=title,
        doc_type=extra.pop("doc_type", "MSA"),
        kind="pdf",
        status=status,
        progress=100 if status == "ready" else extra.pop("progress", 0),
        text=text,
        page_count=pages,
        **extra,
    )
    page_rows = Page.objects.bulk_create(
        [Page(document=document, number=i + 1, char_start=s, char_end=e) for i, (s, e) in enumerate(ranges)]
    )
    chunk_rows = Chunk.objects.bulk_create(
        [
            Chunk(
                document=document,
                chunk_id=hashlib.sha1(para.encode()).hexdigest()[:16],
                ordinal=i,
                text=para,
                char_start=s,
                char_end=e,
                page_start=page,
                page_end=page,
                paragraph=i,
                section=_section(para),
            )
            for i, (page, s, e, para) in enumerate(paragraphs)
        ]
    )
    return document, page_rows, chunk_rows


def make_reviewable(
    engagement, *, title="Master Services Agreement", pages=6, seed=0, engine="offline"
) -> Reviewable:
    from extraction.models import Citation, Extraction, ExtractionRun

    document, page_rows, chunk_rows = make_document(engagement, title=title, pages=pages, seed=seed)
    types = ensure_clause_types()
    run = ExtractionRun.objects.create(engagement=engagement, engine=engine, status="done")
    out = Reviewable(document, page_rows, chunk_rows)
    text = document.text

    def chunk_of(paragraph: str):
        return next(c for c in chunk_rows if c.text == paragraph)

    for name, (page, paragraph, quote) in PLANTED.items():
        type_name = name.split("#")[0]
        chunk = chunk_of(paragraph)
        quote = quote or paragraph
        start = text.index(quote, chunk.char_start)
        end = start + len(quote)
        extraction = out.extractions.get(type_name)
        if extraction is None:
            extraction = Extraction.objects.create(
                run=run,
                document=document,
                clause_type=types[type_name],
                status="found",
                engine=engine,
                model="offline-bm25" if engine == "offline" else "claude-sonnet-4-5",
                clause_text=paragraph if quote == paragraph else quote,
                dedupe_key=chunk.chunk_id,
            )
            out.extractions[type_name] = extraction
        cits = out.citations.setdefault(type_name, [])
        cits.append(
            Citation.objects.create(
                extraction=extraction,
                chunk=chunk,
                ordinal=len(cits),
                page=page,
                start=start,
                end=end,
                quote=text[start:end],
                model_page=page,
            )
        )
    out.extractions["Non-Compete"] = Extraction.objects.create(
        run=run,
        document=document,
        clause_type=types["Non-Compete"],
        status="not_found",
        engine=engine,
        dedupe_key="not_found",
    )
    out.extractions["Insurance"] = Extraction.objects.create(
        run=run,
        document=document,
        clause_type=types["Insurance"],
        status="unverified",
        engine=engine,
        clause_text="Provider shall maintain insurance of $5,000,000.",
        dedupe_key="unverified",
        verification_errors=["quote not found in chunk text: 'insurance of $5,000,000'"],
    )
    return out
