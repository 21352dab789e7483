"""Search across an engagement's contracts: one query over every chunk of its ready documents, hybrid (full
text and vectors, ``ingest.search.search``), the hits grouped by contract in the order of each contract's
best hit and best first within a contract, each with a snippet (``reviewer.snippets``) and the page and
heading path of the words it shows.
Best first rather than in page order: docs/decisions.md, reviewer.engagement_search.search_engagement."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from ingest.models import Document, Page
from ingest.pages import PageSpan, page_of
from ingest.search import search
from ingest.sections import sections_at
from reviewer.snippets import anchor, snippet

HITS = 40  # chunks a search returns across the engagement


@dataclass
class Hit:
    chunk_id: int
    page: int
    section: str
    snippet: str  # escaped HTML, the query's words marked
    score: float


@dataclass
class ContractHits:
    document_id: int
    title: str
    doc_type: str
    hits: list[Hit] = field(default_factory=list)


def search_engagement(
    engagement,
    query: str,
    *,
    doc_type: str = "",
    since: date | None = None,
    k: int = HITS,
    query_vector=None,
) -> list[ContractHits]:
    docs = Document.objects.filter(engagement=engagement, status=Document.Status.READY)
    if doc_type:
        docs = docs.filter(doc_type=doc_type)
    if since is not None:
        docs = docs.filter(created_at__date__gte=since)
    meta = {pk: (title, dt) for pk, title, dt in docs.values_list("pk", "title", "doc_type")}
    if not meta or not query.strip():
        return []
    hits = search(query, list(meta), k, query_vector=query_vector)
    held = {h.chunk.document_id for h in hits}
    # where each hit's snippet opens: a chunk can run over a page break or a heading (None: by meaning alone)
    shown = [(h, anchor(h.chunk.text, query)) for h in hits]
    documents = Document.objects.filter(pk__in=held).only("pk", "sha256", "updated_at").in_bulk()
    over_a_break = {
        h.chunk.document_id for h, at in shown if at is not None and h.chunk.page_end > h.chunk.page_start
    }
    pages: dict[int, list[PageSpan]] = {pk: [] for pk in held}
    for pk, *span in (
        Page.objects.filter(document_id__in=over_a_break)
        .order_by("document_id", "number")
        .values_list("document_id", "number", "char_start", "char_end")
    ):
        pages[pk].append(PageSpan(*span))
    offsets: dict[int, list[int]] = {pk: [] for pk in held}
    for h, at in shown:
        if at is not None:
            offsets[h.chunk.document_id].append(h.chunk.char_start + at)
    sections = sections_at({documents[pk]: at for pk, at in offsets.items() if at})
    headings = {pk: dict(zip(offsets[pk], found, strict=True)) for pk, found in sections.items()}
    grouped: dict[int, ContractHits] = {}  # in insertion order: search() gives the hits best first
    for hit, at in shown:
        c = hit.chunk
        title, dt = meta[c.document_id]
        group = grouped.setdefault(c.document_id, ContractHits(c.document_id, title, dt))
        page, section = c.page_start, c.section
        if at is not None:
            offset = c.char_start + at
            page = page_of(offset, pages[c.document_id]) if pages[c.document_id] else page
            section = headings[c.document_id][offset] or section
        group.hits.append(Hit(c.pk, page, section, snippet(c.text, query), hit.score))
    return list(grouped.values())
