"""Hybrid retrieval over the chunks of given documents: pgvector cosine + PostgreSQL full text,
fused by reciprocal rank.

    hits = search("governing law of this agreement", [document], k=5, reading_order=True)
    hits[0].chunk.page_start, hits[0].score, hits[0].vector_rank, hits[0].text_rank

* Filtering by document is exact: only chunks of ``documents`` are ever returned. The
  vector side scans those chunks exactly (:func:`choose_method`) unless they are many
  (> :data:`EXACT_MAX_ROWS`) *and* most of the table; then it walks the HNSW index with
  ``hnsw.iterative_scan = relaxed_order`` (pgvector ≥ 0.8), which keeps scanning until
  enough rows pass the filter; candidates are re-sorted by their true distance.
  ``bench/bench_search.py`` measures both.
* The text side matches any of the query's English stems (an OR of ``plainto_tsquery``
  lexemes: a natural-language clause query rarely has every word in one chunk), ranked by
  ``ts_rank`` against the generated ``Chunk.search`` column (GIN index). Over a large set
  (more than :data:`EXACT_MAX_ROWS` chunks) that would rank most rows, so there it takes the
  chunks holding every stem (GIN, cheap) and ranks the any-stem matches only among the
  vector side's top :data:`TEXT_POOL` (see :func:`text_candidates`).
* Reciprocal rank fusion: ``score = Σ 1 / (RRF_K + rank)`` over the two lists (ranks from 1).
* ``rerank(query, hits) -> hits`` may reorder (or drop) the fused candidates before the top
  ``k`` are taken; ``reading_order=True`` then returns those ``k`` in document order.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable, Sequence

from django.db import connection, transaction

from ingest.embeddings import embed_query
from ingest.models import Chunk, Document

RRF_K = 60
EXACT_MAX_ROWS = 5_000  # up to this many chunks in the filter: exact scan; above: HNSW
HNSW_EF_SEARCH = 100
MIN_CANDIDATES = 20
HNSW_MIN_SHARE = 0.5  # above EXACT_MAX_ROWS, HNSW only when the filter keeps this share of the table
TEXT_POOL = 200  # over a large set, the text side ranks any-stem matches among this many vector candidates

Rerank = Callable[[str, list["SearchHit"]], list["SearchHit"]]


@dataclass
class SearchHit:
    chunk: Chunk
    score: float
    vector_rank: int | None
    text_rank: int | None


def search(query: str, documents, k: int = 5, *, reading_order: bool = False, rerank: Rerank | None = None,
           method: str = "auto", query_vector: Sequence[float] | None = None) -> list[SearchHit]:
    """The ``k`` best chunks of ``documents`` for ``query`` (see the module docstring).

    ``documents``: Document rows, ids, or a queryset. ``method``: ``auto`` | ``exact`` |
    ``hnsw`` for the vector side. ``query_vector`` skips embedding the query (benchmarks).
    """
    document_ids = _ids(documents)
    if not document_ids or not query.strip() or k <= 0:
        return []
    depth = max(4 * k, MIN_CANDIDATES)
    vector = list(query_vector) if query_vector is not None else embed_query(query)
    large = chunk_count(document_ids) > EXACT_MAX_ROWS
    if method == "auto":
        method = choose_method(document_ids, large=large)
    # Over a large set the OR text query would rank most rows: bound it (see text_candidates).
    pool = vector_candidates(vector, document_ids, max(depth, TEXT_POOL) if large else depth, method=method)
    text_ids = text_candidates(query, document_ids, depth, within=pool if large else None)
    fused = fuse(pool[:depth], text_ids)
    if rerank is None:
        fused = fused[:k]  # only the rerank hook needs the rows of every candidate
    chunks = Chunk.objects.defer("embedding", "search").in_bulk([pk for pk, *_ in fused])
    hits = [SearchHit(chunks[pk], score, v, t) for pk, score, v, t in fused if pk in chunks]
    if rerank is not None:
        hits = list(rerank(query, hits))
    hits = hits[:k]
    if reading_order:
        position = {pk: i for i, pk in enumerate(document_ids)}
        hits.sort(key=lambda h: (position.get(h.chunk.document_id, 0), h.chunk.char_start, h.chunk.ordinal))
    return hits


def fuse(*ranked: Sequence[int], rrf_k: int = RRF_K) -> list[tuple[int, float, int | None, int | None]]:
    """Reciprocal rank fusion of the vector and text lists: ``(pk, score, vector_rank, text_rank)``,
    best first (ties: better vector rank, then lower pk, so results are deterministic)."""
    ranks: dict[int, list[int | None]] = {}
    for which, ids in enumerate(ranked):
        for rank, pk in enumerate(ids, start=1):
            ranks.setdefault(pk, [None] * len(ranked))[which] = rank
    scored = [
        (pk, sum(1.0 / (rrf_k + r) for r in rs if r is not None), *(rs + [None, None])[:2])
        for pk, rs in ranks.items()
    ]
    scored.sort(key=lambda row: (-row[1], row[2] if row[2] is not None else 1 << 30, row[0]))
    return scored


def vector_candidates(vector: Sequence[float], document_ids: list[int], limit: int, *, method: str = "auto") -> list[int]:
    """Chunk pks of ``document_ids`` nearest to ``vector`` by cosine distance, nearest first."""
    literal = "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"
    if method == "auto":
        method = choose_method(document_ids)
    if method == "exact":
        # Ordering by an expression ("+ 0") rather than the bare operator keeps the planner
        # off the (global, approximate) HNSW index: the document's rows are found through the
        # (document, ordinal) btree and every distance is computed — a true exact scan.
        sql = (
            "SELECT id FROM ingest_chunk WHERE document_id = ANY(%s) AND embedding IS NOT NULL "
            "ORDER BY (embedding <=> %s::vector) + 0, id LIMIT %s"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [document_ids, literal, limit])
            return [row[0] for row in cursor.fetchall()]
    if method != "hnsw":
        raise ValueError(f"method must be auto, exact or hnsw, not {method!r}")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SET LOCAL hnsw.iterative_scan = relaxed_order; "
            f"SET LOCAL hnsw.ef_search = {int(max(HNSW_EF_SEARCH, limit))}"
        )
        cursor.execute(
            "SELECT id, embedding <=> %s::vector AS distance FROM ingest_chunk "
            "WHERE document_id = ANY(%s) ORDER BY embedding <=> %s::vector LIMIT %s",
            [literal, document_ids, literal, limit],
        )
        rows = cursor.fetchall()
    rows.sort(key=lambda row: (row[1], row[0]))  # relaxed order: re-sort by true distance
    return [row[0] for row in rows]


def text_candidates(query: str, document_ids: list[int], limit: int, *, within: Sequence[int] | None = None) -> list[int]:
    """Chunk pks of ``document_ids`` matching English stems of ``query``, best first.

    Without ``within``: every chunk matching *any* stem, by ``ts_rank`` (term frequency,
    normalised by length; ``ts_rank_cd`` cost ~5x more per row). An OR query matches most
    chunks of a long contract, so this costs time in proportion to the chunks searched:
    right for a document or a few (≤ :data:`EXACT_MAX_ROWS` chunks).

    With ``within`` (pks, e.g. the vector side's candidate pool), the cost is bounded: chunks
    holding *all* stems (found through the GIN index, cheap however large the set), then the
    pool's chunks holding any stem; all-stem matches first, then by ``ts_rank``.
    """
    all_stems = _and_tsquery(query)
    any_stem = all_stems.replace(" & ", " | ")
    if not any_stem:
        return []
    # The tsqueries go in as literals (not a CTE) so the planner can use the GIN index.
    if within is None:
        sql = (
            "SELECT id FROM ingest_chunk WHERE document_id = ANY(%s) AND search @@ %s::tsquery "
            "ORDER BY ts_rank(search, %s::tsquery, 1) DESC, id LIMIT %s"
        )
        params = [document_ids, any_stem, any_stem, limit]
    else:
        sql = (
            "SELECT id FROM ingest_chunk WHERE document_id = ANY(%s) "
            "AND (search @@ %s::tsquery OR (id = ANY(%s) AND search @@ %s::tsquery)) "
            "ORDER BY (search @@ %s::tsquery) DESC, ts_rank(search, %s::tsquery, 1) DESC, id LIMIT %s"
        )
        params = [document_ids, all_stems, list(within), any_stem, all_stems, any_stem, limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


def _and_tsquery(query: str) -> str:
    """``plainto_tsquery('english', query)`` as text: every stem (``'a' & 'b'``)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT plainto_tsquery('english', %s)::text", [query])
        return cursor.fetchone()[0] or ""


def choose_method(document_ids: list[int], *, large: bool | None = None) -> str:
    """``exact`` or ``hnsw`` for the vector side over these documents' chunks.

    Exact up to :data:`EXACT_MAX_ROWS` chunks. Above that, HNSW only when the documents hold
    at least :data:`HNSW_MIN_SHARE` of the table: a filtered HNSW walk must pass over the
    other documents' vectors (iterative scan) and was slower, and far less complete, than an
    exact scan of the document's own rows when those were 1-10% of a 1M-row table
    (bench/bench_search.py).
    """
    if large is None:
        large = chunk_count(document_ids) > EXACT_MAX_ROWS
    if not large:
        return "exact"
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = 'ingest_chunk'::regclass")
        table_rows = cursor.fetchone()[0]
        if table_rows <= 0:  # never analysed: no basis for the approximate path
            return "exact"
        cursor.execute(
            "EXPLAIN (FORMAT JSON) SELECT 1 FROM ingest_chunk WHERE document_id = ANY(%s)", [document_ids]
        )
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    estimated = plan[0]["Plan"]["Plan Rows"]
    return "hnsw" if estimated >= HNSW_MIN_SHARE * table_rows else "exact"


def chunk_count(document_ids: list[int], *, cap: int = EXACT_MAX_ROWS + 1) -> int:
    """Chunks of the documents, counted up to ``cap`` (enough to pick a method, and cheap)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM (SELECT 1 FROM ingest_chunk WHERE document_id = ANY(%s) LIMIT %s) s",
            [document_ids, cap],
        )
        return cursor.fetchone()[0]


def _ids(documents) -> list[int]:
    if isinstance(documents, (Document, int)):
        documents = [documents]
    if hasattr(documents, "values_list") and getattr(documents, "model", None) is Document:
        return list(documents.values_list("pk", flat=True))
    ids: list[int] = []
    for item in documents:
        pk = item.pk if isinstance(item, Document) else int(item)
        if pk not in ids:
            ids.append(pk)
    return ids

