"""Search across an engagement's contracts: one query over every chunk of its ready documents, hybrid (full
text and vectors, ``ingest.search.search``), the hits grouped by contract in the order of each contract's
best hit and best first within a contract, each with its page and a snippet (``reviewer.snippets``).
Best first rather than in page order: docs/decisions.md, reviewer.engagement_search.search_engagement."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from ingest.models import Document
from ingest.search import search
from reviewer.snippets import snippet

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
    grouped: dict[int, ContractHits] = {}  # in insertion order: search() gives the hits best first
    for hit in search(query, list(meta), k, query_vector=query_vector):
        c = hit.chunk
        title, dt = meta[c.document_id]
        group = grouped.setdefault(c.document_id, ContractHits(c.document_id, title, dt))
        group.hits.append(Hit(c.pk, c.page_start, c.section, snippet(c.text, query), hit.score))
    return list(grouped.values())
