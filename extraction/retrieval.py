"""Clause question -> ranked chunks of one document (hybrid search, fused, reranked).

``retrieve(document, clause, k)`` is what every clause question gets:

1. candidates: for each query variant of the clause (its name with its retrieval query,
   its description, its bare query, its example clause), the nearest chunks by embedding
   (pgvector, ``ingest.search``) and the best lexical matches (BM25 over the document's
   chunks on word stems and pairs of neighbouring stems, ``extraction.bm25``), ``Strategy.depth`` each;
2. a sentence-level list: chunks ranked by their best sentence's cosine to the query
   (all-MiniLM-L6-v2 reads 256 word pieces; a clause is one or two sentences, so the
   best sentence says more than the whole-chunk vector);
3. weighted reciprocal rank fusion of all lists (``score = sum weight/(60 + rank)``; a vector
   list weighs 1, a full-text list 2, the sentence list 3);
4. front matter: for the types a contract states in its preamble (title, parties,
   dates) the opening chunks are kept in the top ``k``.

Returns ``ScoredChunk`` in rank order, each with the cosine between the clause query
and the chunk (the offline engine uses it). The agent's ``search_document`` tool goes
through ``searcher(document)``. ``embed_texts`` gives the offline engine sentence
vectors through the ingest embedding cache.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Max

from extraction.bm25 import Bm25Index
from extraction.catalog import ClauseType
from extraction.docview import DocumentView, ScoredChunk, chunk_view, load_document
from extraction.finder.runtime import active_finder, rank_chunks
from extraction.lexical import terms_and_pairs
from ingest.embeddings import embed_query
from ingest.embeddings import text_vectors as embed_texts
from ingest.fusion import RRF_K, rrf
from ingest.models import Chunk, Document
from ingest.search import search, vector_candidates
from ingest.sentences import evidence_sentences

DEFAULT_K = 5
# Stated in a contract's opening lines (title, parties, dates), whatever the document.
FRONT_MATTER = {"Document Name": 1, "Parties": 2, "Agreement Date": 2, "Effective Date": 1}


@dataclass(frozen=True)
class Strategy:
    """Retrieval knobs; the defaults are what ``retrieve`` uses for every clause question.

    ``variants``: the query wordings searched (``query_text``), each with a vector list and,
    when named in ``text_variants`` (None: all), a full-text (BM25) list; ``depth``: candidates
    per list; ``rrf_k``: the fusion constant; ``sentence_list``: add the sentence-level list over
    the fused pool; weights: a vector list 1, each full-text list ``lexical_weight``, the sentence
    list ``sentence_weight``; ``front_matter``: keep the opening chunks for ``FRONT_MATTER`` types.
    Why these defaults: strict part recall@5 on cuad-dev, first and held-out half
    (docs/decisions.md, extraction.retrieval.Strategy and the sections after it)."""

    variants: tuple[str, ...] = ("name_query", "description", "query", "example")
    text_variants: tuple[str, ...] | None = None  # full-text lists for these variants (None: all)
    depth: int = 80
    rrf_k: int = RRF_K
    sentence_list: bool = True
    sentence_weight: float = 3.0  # weight of the sentence ranking in the fusion (a vector list: 1)
    lexical_weight: float = 2.0  # weight of each full-text (BM25) list
    front_matter: bool = True
    finder_weight: float = 100.0  # the finder's list leads; the others break its near-ties (0: not fused)


DEFAULT_STRATEGY = Strategy()


def query_text(clause: ClauseType, variant: str) -> str:
    """One wording of the clause question ("" when the clause has none, e.g. no example clause)."""
    return {
        "name_query": f"{clause.name}: {clause.query}",
        "query": clause.query,
        "name": clause.name,
        "description": f"{clause.name}: {clause.description}",
        "example": (clause.example or "").strip(),
    }[variant]


def clause_query(clause: ClauseType) -> str:
    """The main text searched for a clause type: its name, then its retrieval query."""
    return query_text(clause, "name_query")


@functools.lru_cache(maxsize=1024)
def _query_vector(text: str) -> tuple[float, ...]:
    return tuple(embed_query(text))


def _cosine(a: Sequence[float] | None, b: Sequence[float]) -> float | None:
    if a is None or len(a) == 0:
        return None
    va, vb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    na, nb = np.linalg.norm(va), np.linalg.norm(vb)
    return float(va @ vb / (na * nb)) if na and nb else None


def _sentence_ranking(pks: Sequence[int], texts: dict[int, str], query_vec: Sequence[float]) -> list[int]:
    """``pks`` ordered by the best cosine of any of their sentences to the query."""
    owners, sentences = [], []
    for pk in pks:
        text = texts[pk]
        for s, e in evidence_sentences(text):
            owners.append(pk)
            sentences.append(text[s:e])
    if not sentences:
        return list(pks)
    sims = embed_texts(sentences) @ np.asarray(query_vec, dtype=np.float32)
    best: dict[int, float] = {}
    for pk, sim in zip(owners, sims):
        best[pk] = max(best.get(pk, -1.0), float(sim))
    return sorted(pks, key=lambda pk: -best.get(pk, -1.0))


def retrieve(
    document, clause: ClauseType, k: int = DEFAULT_K, *, strategy: Strategy = DEFAULT_STRATEGY
) -> list[ScoredChunk]:
    """The context candidates for one clause question on one document, best first."""
    doc_ids = [document.pk]
    n_chunks, last_pk = chunk_stats(document.pk)
    lexical = _build_lexical_index(document.pk, n_chunks, last_pk)
    lists: list[list[int]] = []
    weights: list[float] = []
    finder = active_finder() if strategy.finder_weight else None
    if finder is not None and finder.knows(clause.name):
        view = _document_view(document.pk, n_chunks, last_pk)
        lists.append([view.chunk_pks[cid] for cid in rank_chunks(view, clause, finder)[: strategy.depth]])
        weights.append(strategy.finder_weight)
    main_vec = _query_vector(clause_query(clause))
    for variant in strategy.variants:
        q = query_text(clause, variant)
        if not q:
            continue
        lists.append(vector_candidates(list(_query_vector(q)), doc_ids, strategy.depth))
        weights.append(1.0)
        if strategy.text_variants is None or variant in strategy.text_variants:
            lists.append(lexical.rank(lexical_terms(q), strategy.depth))
            weights.append(strategy.lexical_weight)
    pool = [pk for pk, _ in rrf(lists, strategy.rrf_k, weights)][: strategy.depth]
    rows = {c.pk: c for c in Chunk.objects.filter(pk__in=pool).defer("search")}
    if strategy.sentence_list and pool:
        lists.append(_sentence_ranking(pool, {pk: rows[pk].text for pk in pool}, main_vec))
        weights.append(strategy.sentence_weight)
    fused = rrf(lists, strategy.rrf_k, weights)
    ranked = [pk for pk, _ in fused]
    scores = dict(fused)
    lead = FRONT_MATTER.get(clause.name, 0) if strategy.front_matter else 0
    if lead:
        opening = list(Chunk.objects.filter(document=document).order_by("ordinal")[:lead].defer("search"))
        rows.update({c.pk: c for c in opening})
        ranked = [c.pk for c in opening] + [pk for pk in ranked if pk not in {c.pk for c in opening}]
    top = ranked[:k]
    missing = [pk for pk in top if pk not in rows]
    if missing:
        rows.update({c.pk: c for c in Chunk.objects.filter(pk__in=missing).defer("search")})
    return [
        ScoredChunk(chunk_view(rows[pk]), scores.get(pk, 0.0), _cosine(rows[pk].embedding, main_vec))
        for pk in top
    ]


def lexical_index(document) -> Bm25Index:
    """The document's BM25 index, built once per process and rebuilt when its chunks change."""
    return _build_lexical_index(document.pk, *chunk_stats(document.pk))


def chunk_stats(document_pk: int) -> tuple[int, int | None]:
    """(chunks, last chunk pk) of a document: a cache key that changes when its chunks do."""
    stats = Chunk.objects.filter(document_id=document_pk).aggregate(n=Count("pk"), last=Max("pk"))
    return stats["n"], stats["last"]


@functools.lru_cache(maxsize=4)
def _document_view(document_pk: int, n_chunks: int, last_pk: int | None) -> DocumentView:
    return load_document(Document.objects.get(pk=document_pk))


@functools.lru_cache(maxsize=16)
def _build_lexical_index(document_pk: int, n_chunks: int, last_pk: int | None) -> Bm25Index:
    rows = Chunk.objects.filter(document_id=document_pk).order_by("ordinal").values_list("pk", "text")
    return Bm25Index.build(rows.iterator(), lexical_terms)


def lexical_terms(text: str) -> list[str]:
    """BM25 tokens: the content-word stems of ``text`` and each pair of neighbouring stems
    ("change of control" -> ``change_control``), so the phrase outscores its words scattered over
    a chunk (docs/decisions.md, extraction.retrieval.lexical_terms)."""
    return terms_and_pairs(text, joiner="_")


def search_chunks(document, query: str, k: int = DEFAULT_K) -> list[ScoredChunk]:
    """Top ``k`` chunks of ``document`` for a free query (the agent's search tool), rank order."""
    qv = _query_vector(query)
    hits = search(query, [document], k=k, query_vector=qv)[:k]
    vectors = dict(Chunk.objects.filter(pk__in=[h.chunk.pk for h in hits]).values_list("pk", "embedding"))
    return [
        ScoredChunk(chunk_view(h.chunk), float(h.score), _cosine(vectors.get(h.chunk.pk), qv)) for h in hits
    ]


def task_chunks(
    document, queries: Sequence[str], k: int = DEFAULT_K, *, depth: int = 10
) -> list[ScoredChunk]:
    """Up to ``k`` chunks of ``document`` for a task of several ``queries`` (a whole-document task on a
    long document without headings): each query's best chunk in turn, then each one's second, ... so
    that every topic gets its best chunk, which one fused ranking does not promise (chunks that touch
    every topic a little can outrank the one chunk that holds a topic)."""
    ranked = [search_chunks(document, query, depth) for query in queries]
    out: dict[str, ScoredChunk] = {}
    for rank in range(depth):
        for hits in ranked:
            if rank < len(hits) and len(out) < k:
                out.setdefault(hits[rank].chunk.chunk_id, hits[rank])
    return list(out.values())


def searcher(document) -> Callable[[str, int], list[ScoredChunk]]:
    """The agent's ``search_document`` backend for one document."""
    return lambda query, k: search_chunks(document, query, k)
