"""Search across an engagement's contracts: one query over every chunk of its ready documents, hybrid (full
text and vectors, ``ingest.search.search``), the hits grouped by contract in the order of each contract's
best hit and best first within a contract, each with a snippet (``reviewer.snippets``) and the page and
heading path of the words it shows.
Best first rather than in page order: docs/decisions.md, reviewer.engagement_search.search_engagement.

A query that holds exact values ("$18.50", "cust_4711": ``extraction.verify.values_asked``) asks where they
stand: each hit says whether its passage holds every one as the citation verifier reads a quote
(``extraction.verify.holds_values``), and ``split_by_values`` puts those first, apart from the passages found
by words and meaning alone."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date

from extraction.verify import holds_values, values_asked
from ingest.models import Document, Page
from ingest.pages import PageIndex, PageSpan
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
    holds_values: bool = True  # the passage holds every exact value of the query as written (or it has none)


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
    values = values_asked(query)
    # where each hit's snippet opens (None: found by meaning alone); a chunk can run over a page break or
    # a heading, so the page and heading shown are the ones there, not the chunk's first
    opens = [_opening(hit.chunk, query) for hit in hits]
    offsets: dict[int, list[int]] = defaultdict(list)
    over_a_break: set[int] = set()  # contracts with a hit whose chunk runs over a page break
    for hit, at in zip(hits, opens, strict=True):
        if at is not None:
            offsets[hit.chunk.document_id].append(at)
            if hit.chunk.page_end > hit.chunk.page_start:
                over_a_break.add(hit.chunk.document_id)
    documents = Document.objects.filter(pk__in=offsets).only("pk", "sha256", "updated_at").in_bulk()
    headings = sections_at({documents[pk]: at for pk, at in offsets.items()})
    pages = _page_indexes(over_a_break)
    grouped: dict[int, ContractHits] = {}  # in insertion order: search() gives the hits best first
    for hit, at in zip(hits, opens, strict=True):
        c = hit.chunk
        title, dt = meta[c.document_id]
        group = grouped.setdefault(c.document_id, ContractHits(c.document_id, title, dt))
        page, section = c.page_start, c.section
        if at is not None:
            page = pages[c.document_id].page_of(at) if c.document_id in pages else page
            section = headings[c.document_id][at] or section
        holds = not values or holds_values(c.text, values)
        group.hits.append(Hit(c.pk, page, section, snippet(c.text, query), hit.score, holds))
    return list(grouped.values())


def split_by_values(results: list[ContractHits]) -> tuple[list[ContractHits], list[ContractHits]]:
    """The hits whose passages hold the query's exact values, and the others, each grouped by contract in
    the order given."""
    holding: list[ContractHits] = []
    others: list[ContractHits] = []
    for group in results:
        for side, keep in ((holding, True), (others, False)):
            hits = [h for h in group.hits if h.holds_values is keep]
            if hits:
                side.append(ContractHits(group.document_id, group.title, group.doc_type, hits))
    return holding, others


def _opening(chunk, query: str) -> int | None:
    """The document offset where a snippet of ``chunk`` opens, or None when no query word is in it."""
    at = anchor(chunk.text, query)
    return None if at is None else chunk.char_start + at


def _page_indexes(document_ids: set[int]) -> dict[int, PageIndex]:
    """The page tables of the documents whose hits run over a page break (one query)."""
    rows = Page.objects.filter(document_id__in=document_ids).values_list(
        "document_id", "number", "char_start", "char_end"
    )
    tables: dict[int, list[PageSpan]] = defaultdict(list)
    for pk, number, start, end in rows:
        tables[pk].append(PageSpan(number, start, end))
    return {pk: PageIndex(table) for pk, table in tables.items()}
