"""Hybrid retrieval over the chunks of given documents: pgvector cosine + PostgreSQL full text,
fused by reciprocal rank.

    hits = search("governing law of this agreement", [document], k=5, reading_order=True)
    hits[0].chunk.page_start, hits[0].score, hits[0].vector_rank, hits[0].text_rank

* Filtering by document is exact: only chunks of ``documents`` are ever returned. The
  vector side scans those chunks exactly (:func:`choose_method`) unless they are many
  (> :data:`EXACT_MAX_ROWS`). Then, when they are most of the table, it walks the HNSW index
  with ``hnsw.iterative_scan = relaxed_order`` (pgvector ≥ 0.8), which keeps scanning until
  enough rows pass the filter; otherwise it ranks them by the Hamming distance of their sign
  bits (``Chunk.embedding_bits``, read from an index alone) and re-ranks the nearest
  :data:`QUANTIZED_OVERSAMPLE` x pool by their true distance. Candidates are always re-sorted
  by their true distance. ``bench/bench_search.py`` and ``bench/bench_search_engagement.py``
  measure them.
* The text side matches any of the query's English stems (an OR of ``plainto_tsquery``
  lexemes: a natural-language clause query rarely has every word in one chunk), ranked by
  ``ts_rank`` against the generated ``Chunk.search`` column (GIN index). Over a large set
  (more than :data:`EXACT_MAX_ROWS` chunks) that would rank most rows, so there it takes the
  chunks holding every stem (GIN, cheap) and ranks the any-stem matches only among the
  vector side's top :data:`TEXT_POOL` (see :func:`text_candidates`); when the planner expects
  more than :data:`TEXT_MATCH_CAP` chunks holding every stem (a common word), only the pool is
  ranked. Up to :data:`DOCUMENT_GIN_MAX_DOCS` documents the every-stem scan goes through the
  (document, tsvector) GIN index, so it reads the documents' entries of each stem, not the
  stem's posting list over the whole table (:func:`text_bounded_sql`).
* Reciprocal rank fusion: ``score = Σ 1 / (RRF_K + rank)`` over the two lists (ranks from 1).
* ``rerank(query, hits) -> hits`` may reorder (or drop) the fused candidates before the top
  ``k`` are taken; ``reading_order=True`` then returns those ``k`` in document order.

Cost (bench/bench_search.py, 10k chunks in one document): :func:`search` makes two round
trips (over a large set one more for :func:`stem_matches_estimate`, and one more when ``auto``
must weigh HNSW): one for the chunk count and the query's stems,
one statement that runs both sides, fuses them (:data:`FUSED_SQL`, the same arithmetic and
tie-breaks as :func:`fuse`) and returns only the ``k`` winning rows. :func:`vector_candidates`
and :func:`text_candidates` run the very same SQL on their own (extraction's vector lists, the
benchmarks; extraction's lexical lists are BM25, ``extraction.bm25``). The
``tsvector`` of a chunk lives in TOAST (the inline vector fills the row), and each mention of
``search`` in a query fetches it again: the text side copies it once (``tsvector_concat`` with
an empty vector) and ranks that copy.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.db import connection, transaction

from ingest.embeddings import embed_query
from ingest.fusion import RRF_K
from ingest.models import Chunk, Document

EXACT_MAX_ROWS = 5_000  # up to this many chunks in the filter: exact scan; above: HNSW
HNSW_EF_SEARCH = 100
MIN_CANDIDATES = 20
HNSW_MIN_SHARE = 0.5  # above EXACT_MAX_ROWS, HNSW only when the filter keeps this share of the table
TEXT_POOL = 200  # over a large set, the text side ranks any-stem matches among this many vector candidates
QUANTIZED_OVERSAMPLE = 10  # the quantized pass keeps this many times the pool for the true distances
# Over a large set, a query whose every stem the planner expects in more of the documents' chunks than
# this is ranked within the vector pool only: ranking each match reads its tsvector from TOAST
# (~25 us a row), 30,000 matches of one common word took a second (docs/decisions.md,
# ingest.search.TEXT_MATCH_CAP and DOCUMENT_GIN_MAX_DOCS).
TEXT_MATCH_CAP = 1_000
# Up to this many documents the all-stem scan goes through chunk_document_search_gin (ARRAY[document_id],
# search): GIN merges the entries of every document named, a cost that grows with their number; past it the
# plain GIN on search and the document btree are cheaper (docs/decisions.md).
DOCUMENT_GIN_MAX_DOCS = 500

Rerank = Callable[[str, list["SearchHit"]], list["SearchHit"]]

# --- the two sides as SQL (named parameters), shared by search() and the *_candidates functions.
# Each yields (id, r): the rank from 1, best first.

# Exact: ordering by an expression ("+ 0") rather than the bare operator keeps the planner off
# the (global, approximate) HNSW index: the documents' rows are found through the document
# btree and every distance is computed.
VECTOR_EXACT_SQL = (
    "SELECT id, row_number() OVER (ORDER BY d, id) AS r FROM ("
    "SELECT id, (embedding <=> %(vec)s::vector) + 0 AS d FROM ingest_chunk "
    "WHERE document_id = ANY(%(docs)s) AND embedding IS NOT NULL "
    "ORDER BY (embedding <=> %(vec)s::vector) + 0, id LIMIT %(pool)s) s"
)
# HNSW with iterative scan (relaxed order, settings in HNSW_SETTINGS), re-ranked by true distance:
# "+ 0" again, or the planner takes the index's order as sorted and only sorts ties of it.
VECTOR_HNSW_SQL = (
    "SELECT id, row_number() OVER (ORDER BY d, id) AS r FROM ("
    "SELECT id, (embedding <=> %(vec)s::vector) + 0 AS d FROM ingest_chunk "
    "WHERE document_id = ANY(%(docs)s) ORDER BY embedding <=> %(vec)s::vector LIMIT %(pool)s) s"
)
HNSW_SETTINGS = "SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = {ef}; "
# Quantized, for a large share below HNSW_MIN_SHARE: the nearest QUANTIZED_OVERSAMPLE x pool chunks by
# Hamming distance of their sign bits (an index-only scan of chunk_document_bits: 48 bytes a chunk, no
# heap row read), then those re-ranked by their true cosine distance. The bits keep the true nearest
# chunks near the front (docs/decisions.md, ingest.search.QUANTIZED_OVERSAMPLE).
VECTOR_QUANTIZED_SQL = (
    "SELECT id, row_number() OVER (ORDER BY d, id) AS r FROM ("
    "SELECT c.id, (c.embedding <=> %(vec)s::vector) + 0 AS d FROM ingest_chunk c WHERE c.id IN ("
    "SELECT id FROM ingest_chunk WHERE document_id = ANY(%(docs)s) AND embedding_bits IS NOT NULL "
    "ORDER BY embedding_bits <~> binary_quantize(%(vec)s::vector), id LIMIT %(oversample)s) "
    "ORDER BY (c.embedding <=> %(vec)s::vector) + 0, c.id LIMIT %(pool)s) s"
)
VECTOR_SQL = {"exact": VECTOR_EXACT_SQL, "hnsw": VECTOR_HNSW_SQL, "quantized": VECTOR_QUANTIZED_SQL}

# Text over a document set: every chunk matching any stem, by ts_rank. The inner query (OFFSET 0:
# not flattened) fetches each tsvector from TOAST once; ts_rank reads the copy.
TEXT_ALL_SQL = (
    "SELECT id, row_number() OVER (ORDER BY rank DESC, id) AS r FROM ("
    "SELECT id, ts_rank(v, %(any)s::tsquery, 1) AS rank FROM ("
    "SELECT id, tsvector_concat(search, ''::tsvector) AS v FROM ingest_chunk "
    "WHERE document_id = ANY(%(docs)s) AND search @@ %(any)s::tsquery OFFSET 0) s0 "
    "ORDER BY rank DESC, id LIMIT %(depth)s) s"
)
# Text bounded: chunks holding every stem (GIN), then the pool's chunks holding any stem; all-stem
# matches first, then by ts_rank. {matches}: which rows are ranked (text_bounded_sql); {within}: an id
# array (literal or ARRAY(subquery)).
TEXT_BOUNDED_SQL = (
    "SELECT id, row_number() OVER (ORDER BY m DESC, rank DESC, id) AS r FROM ("
    "SELECT id, m, ts_rank(v, %(any)s::tsquery, 1) AS rank FROM ("
    "SELECT id, v, v @@ %(all)s::tsquery AS m FROM ("
    "SELECT id, tsvector_concat(search, ''::tsvector) AS v FROM ingest_chunk "
    "WHERE document_id = ANY(%(docs)s) AND ({matches}) "
    "OFFSET 0) s0) s1 "
    "WHERE m OR v @@ %(any)s::tsquery "
    "ORDER BY m DESC, rank DESC, id LIMIT %(depth)s) s"
)
# The rows ranked: every chunk holding all stems, and the pool. Over at most DOCUMENT_GIN_MAX_DOCS
# documents the all-stem arm also names the documents as chunk_document_search_gin's first column
# (the same expression, so the planner matches the index): GIN then intersects each stem's entries
# with the documents' instead of collecting the stem's entries over the whole table.
ALL_STEMS_MATCHES = "({documents}search @@ %(all)s::tsquery) OR id = ANY({within})"
DOCUMENTS_GIN = "ARRAY[document_id] && %(docs)s::bigint[] AND "
# Stems too common to rank every match (estimated > TEXT_MATCH_CAP): the pool only.
POOL_MATCHES = "id = ANY({within})"
NO_TEXT_SQL = "SELECT NULL::bigint AS id, NULL::bigint AS r WHERE false"

# Both sides, reciprocal rank fusion (as fuse(): same float arithmetic, same tie-breaks) and the
# winning rows, in one statement.
FUSED_SQL = (
    "WITH v AS MATERIALIZED ({vector}), t AS MATERIALIZED ({text}), "
    "f AS (SELECT coalesce(v.id, t.id) AS id, v.r AS vr, t.r AS tr, "
    "coalesce(1.0::float8 / (%(rrf_k)s + v.r), 0) + coalesce(1.0::float8 / (%(rrf_k)s + t.r), 0) AS score "
    "FROM (SELECT id, r FROM v WHERE r <= %(depth)s) v FULL JOIN t ON t.id = v.id) "
    "SELECT f.score, f.vr, f.tr, {columns} FROM f JOIN ingest_chunk c ON c.id = f.id "
    "ORDER BY f.score DESC, coalesce(f.vr, 1073741824), f.id LIMIT %(limit)s"
)
_ROW_FIELDS = [
    f for f in Chunk._meta.concrete_fields if f.attname not in ("embedding", "search", "embedding_bits")
]


@dataclass
class SearchHit:
    chunk: Chunk
    score: float
    vector_rank: int | None
    text_rank: int | None


def search(
    query: str,
    documents,
    k: int = 5,
    *,
    reading_order: bool = False,
    rerank: Rerank | None = None,
    method: str = "auto",
    query_vector: Sequence[float] | None = None,
) -> list[SearchHit]:
    """The ``k`` best chunks of ``documents`` for ``query`` (see the module docstring).

    ``documents``: Document rows, ids, or a queryset. ``method``: ``auto`` | ``exact`` |
    ``hnsw`` | ``quantized`` for the vector side. ``query_vector`` skips embedding the query (benchmarks).
    """
    document_ids = _ids(documents)
    if not document_ids or not query.strip() or k <= 0:
        return []
    if method != "auto":
        _check_method(method)
    depth = max(4 * k, MIN_CANDIDATES)
    vector = list(query_vector) if query_vector is not None else embed_query(query)
    count, all_stems, table_rows = _prepare(query, document_ids)
    large = count > EXACT_MAX_ROWS
    if method == "auto":
        method = choose_method(document_ids, large=large, table_rows=table_rows)
    # Over a large set the OR text query would rank most rows: bound it (see text_candidates).
    pool = max(depth, TEXT_POOL) if large else depth
    if not all_stems:
        text_sql = NO_TEXT_SQL
    elif large:
        text_sql = text_bounded_sql(document_ids, all_stems, within="ARRAY(SELECT id FROM v)")
    else:
        text_sql = TEXT_ALL_SQL
    sql = FUSED_SQL.format(
        vector=VECTOR_SQL[method],
        text=text_sql,
        columns=", ".join(f"c.{connection.ops.quote_name(f.column)}" for f in _ROW_FIELDS),
    )
    params = {
        "vec": _vector_literal(vector),
        "docs": document_ids,
        "pool": pool,
        "oversample": QUANTIZED_OVERSAMPLE * pool,
        "depth": depth,
        "all": all_stems,
        "any": all_stems.replace(" & ", " | "),
        "rrf_k": RRF_K,
        # only the rerank hook needs the rows of every candidate
        "limit": k if rerank is None else None,
    }
    rows = _fetch(sql, params, hnsw_ef=max(HNSW_EF_SEARCH, pool) if method == "hnsw" else None)
    names = [f.attname for f in _ROW_FIELDS]
    hits = [
        SearchHit(Chunk.from_db(connection.alias, names, row[3:]), row[0], row[1], row[2]) for row in rows
    ]
    if rerank is not None:
        hits = list(rerank(query, hits))
    hits = hits[:k]
    if reading_order:
        position = {pk: i for i, pk in enumerate(document_ids)}
        hits.sort(key=lambda h: (position.get(h.chunk.document_id, 0), h.chunk.char_start, h.chunk.ordinal))
    return hits


def vector_candidates(
    vector: Sequence[float], document_ids: list[int], limit: int, *, method: str = "auto"
) -> list[int]:
    """Chunk pks of ``document_ids`` nearest to ``vector`` by cosine distance, nearest first."""
    if method == "auto":
        method = choose_method(document_ids)
    _check_method(method)
    sql = VECTOR_SQL[method] + " ORDER BY r"
    params = {
        "vec": _vector_literal(vector),
        "docs": list(document_ids),
        "pool": limit,
        "oversample": QUANTIZED_OVERSAMPLE * limit,
    }
    return [
        row[0]
        for row in _fetch(sql, params, hnsw_ef=max(HNSW_EF_SEARCH, limit) if method == "hnsw" else None)
    ]


def text_candidates(
    query: str, document_ids: list[int], limit: int, *, within: Sequence[int] | None = None
) -> list[int]:
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
    if not all_stems:
        return []
    # The tsqueries go in as literals (not a CTE) so the planner can use the GIN index.
    params = {
        "docs": list(document_ids),
        "all": all_stems,
        "any": all_stems.replace(" & ", " | "),
        "depth": limit,
    }
    if within is None:
        sql = TEXT_ALL_SQL
    else:
        sql = text_bounded_sql(document_ids, all_stems, within="%(within)s")
        params["within"] = list(within)
    return [row[0] for row in _fetch(sql + " ORDER BY r", params)]


def text_bounded_sql(document_ids: list[int], all_stems: str, *, within: str) -> str:
    """:data:`TEXT_BOUNDED_SQL` for these documents and stems: the all-stem arm through
    ``chunk_document_search_gin`` up to :data:`DOCUMENT_GIN_MAX_DOCS` documents, and no all-stem arm
    when the planner expects more than :data:`TEXT_MATCH_CAP` matches among the documents' chunks."""
    if stem_matches_estimate(document_ids, all_stems) > TEXT_MATCH_CAP:
        matches = POOL_MATCHES.format(within=within)
    else:
        documents = DOCUMENTS_GIN if len(document_ids) <= DOCUMENT_GIN_MAX_DOCS else ""
        matches = ALL_STEMS_MATCHES.format(documents=documents, within=within)
    return TEXT_BOUNDED_SQL.format(matches=matches)


def stem_matches_estimate(document_ids: list[int], all_stems: str) -> float:
    """The planner's estimate of the documents' chunks holding every stem (its statistics of the
    ``search`` lexemes times the documents' share): one EXPLAIN, no row read."""
    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN (FORMAT JSON) SELECT 1 FROM ingest_chunk "
            "WHERE document_id = ANY(%s) AND search @@ %s::tsquery",
            [document_ids, all_stems],
        )
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return plan[0]["Plan"]["Plan Rows"]


def _and_tsquery(query: str) -> str:
    """``plainto_tsquery('english', query)`` as text: every stem (``'a' & 'b'``)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT plainto_tsquery('english', %s)::text", [query])
        return cursor.fetchone()[0] or ""


def _prepare(query: str, document_ids: list[int], *, cap: int = EXACT_MAX_ROWS + 1) -> tuple[int, str, float]:
    """One round trip: the documents' chunks counted up to ``cap`` (:func:`chunk_count`), the
    query's stems (:func:`_and_tsquery`) and the table's estimated rows (``reltuples``)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT count(*) FROM "
            "(SELECT 1 FROM ingest_chunk WHERE document_id = ANY(%s) LIMIT %s) s), "
            "plainto_tsquery('english', %s)::text, "
            "(SELECT reltuples FROM pg_class WHERE oid = 'ingest_chunk'::regclass)",
            [document_ids, cap, query],
        )
        count, stems, table_rows = cursor.fetchone()
    return count, stems or "", table_rows


def _fetch(sql: str, params: dict, *, hnsw_ef: int | None = None) -> list[tuple]:
    """Rows of ``sql``; with ``hnsw_ef``, after ``SET LOCAL`` of the HNSW search settings in the
    same round trip (one simple-protocol query: an implicit transaction, which SET LOCAL needs)."""
    if hnsw_ef is not None and connection.settings_dict.get("OPTIONS", {}).get("server_side_binding") is True:
        # Server-side binding (extended protocol) takes one statement per query: a transaction.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(HNSW_SETTINGS.format(ef=int(hnsw_ef)))
            cursor.execute(sql, params)
            return cursor.fetchall()
    with connection.cursor() as cursor:
        if hnsw_ef is None:
            cursor.execute(sql, params)
        else:
            cursor.execute(HNSW_SETTINGS.format(ef=int(hnsw_ef)) + sql, params)
            while cursor.description is None and cursor.nextset():
                pass
        return cursor.fetchall()


def _vector_literal(vector: Sequence[float]) -> str:
    """``[x,...]`` with 7 significant digits (the same text as ``f"{x:.7g}"``, formatted at once)."""
    values = tuple(map(float, vector))
    return "[" + ",".join(["%.7g"] * len(values)) % values + "]"


def _check_method(method: str) -> None:
    if method not in VECTOR_SQL:
        raise ValueError(f"method must be auto, {', '.join(VECTOR_SQL)}, not {method!r}")


def choose_method(
    document_ids: list[int], *, large: bool | None = None, table_rows: float | None = None
) -> str:
    """``exact``, ``quantized`` or ``hnsw`` for the vector side over these documents' chunks.

    Exact up to :data:`EXACT_MAX_ROWS` chunks. Above that, HNSW only when the documents hold
    at least :data:`HNSW_MIN_SHARE` of the table: a filtered HNSW walk must pass over the
    other documents' vectors (iterative scan), which makes it slower and far less complete than
    a scan of a small share's own rows (docs/decisions.md, ingest.search.HNSW_MIN_SHARE). Below
    that share, the quantized scan: the exact one reads every wide heap row of the documents
    (docs/decisions.md, ingest.search.QUANTIZED_OVERSAMPLE).
    ``table_rows``: ``reltuples`` if the caller has it.
    """
    if large is None:
        large = chunk_count(document_ids) > EXACT_MAX_ROWS
    if not large:
        return "exact"
    with connection.cursor() as cursor:
        if table_rows is None:
            cursor.execute("SELECT reltuples FROM pg_class WHERE oid = 'ingest_chunk'::regclass")
            table_rows = cursor.fetchone()[0]
        if table_rows <= 0:  # never analysed: no basis for choosing the HNSW walk
            return "quantized"
        # The documents' own counts (Document.chunk_count): the planner's estimate for an id list takes
        # every document as the table's average, far off for short contracts among long ones.
        cursor.execute(
            "SELECT coalesce(sum(chunk_count), 0) FROM ingest_document WHERE id = ANY(%s)", [document_ids]
        )
        chunks = cursor.fetchone()[0]
    return "hnsw" if chunks >= HNSW_MIN_SHARE * table_rows else "quantized"


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
    pks = (item.pk if isinstance(item, Document) else int(item) for item in documents)
    return list(dict.fromkeys(pks))  # each once, in the order given
