"""Search latency of :func:`ingest.search.search` (hybrid vector + full text, RRF), p50/p95.

Two scenarios on a throw-away embedded PostgreSQL + pgvector:

1. ``--one-doc`` chunks (default 10,000) in one document: the vector side by exact scan,
   by HNSW with iterative scan, and ``auto`` (what extraction gets). Target p95 ≤ 10 ms.
2. The table grown to ``--table-rows`` chunks (default 1,000,000; 0 skips it) over many
   documents of ``--doc-chunks`` chunks: searches of one document, of the 10k document, and
   of an engagement-wide set of ``--wide-docs`` documents. Target p95 ≤ 50 ms.

Vectors are random unit vectors (a hard case for HNSW: no cluster structure) and texts are
random sequences of contract words, written with binary COPY; the HNSW and GIN indexes are
dropped during the bulk load and rebuilt after it (build times reported). Query vectors are
given (``query_vector=``), so the figures are the database side plus fusion; embedding a
query is measured apart (``query_embedding``). Every latency covers the whole ``search()``
call: vector candidates, text candidates, fusion and loading the chunk rows. Beside the wall
clock, ``cpu_p50_ms``/``cpu_p95_ms``: CPU time per search (this process's thread plus the
database backend), which a busy shared machine inflates far less than the wall clock.
``fused_vs_two_sides``: search()'s one-statement fusion checked against the two sides run
apart and fused in Python (identical lists expected).

Baseline: the exact scan (``method="exact"``) of the same documents with the same queries, in
the same run. It is the simplest correct answer (no index, full recall), so each
``speedup_vs_exact`` (exact ms / ours ms, p50/p95 and CPU; > 1: faster than the exact scan) says
what the index and ``auto``'s choice buy, next to the recall they cost (``*_recall_at_20_vs_exact``).
The engagement-wide exact scan is slow by nature, so it and its ``auto`` counterpart run 20 queries.

Usage: ``python -m bench.bench_search [--one-doc 10000] [--table-rows 1000000] [--queries 100]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

COPY_SQL = (
    "COPY ingest_chunk (document_id, chunk_id, ordinal, text, char_start, char_end, page_start, page_end, "
    "paragraph, section, embedding) FROM STDIN WITH (FORMAT BINARY)"
)
COPY_TYPES = ["int8", "varchar", "int4", "text", "int4", "int4", "int4", "int4", "int4", "varchar", "vector"]
WORDS_PER_CHUNK = 60


def vocabulary() -> list[str]:
    from demo.prose import LegalProse

    prose = LegalProse(seed=1)
    words = {w.strip(".,;:()\"'").lower() for _ in range(400) for w in prose.sentence().split()}
    return sorted(w for w in words if w.isalpha() and len(w) > 2)


def random_units(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.standard_normal((n, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def bulk_chunks(
    document_ids: list[int],
    per_document: int,
    rng: np.random.Generator,
    words: list[str],
    batch: int = 20_000,
) -> float:
    """COPY ``per_document`` random chunks into each document; returns seconds."""
    from django.db import connection
    from pgvector.psycopg import register_vector

    connection.ensure_connection()
    register_vector(connection.connection)
    vocab = np.asarray(words)
    started = time.perf_counter()
    pending: list[tuple[int, int]] = [(d, o) for d in document_ids for o in range(per_document)]
    with connection.connection.cursor() as cursor:
        for start in range(0, len(pending), batch):
            part = pending[start : start + batch]
            vectors = random_units(rng, len(part))
            picks = rng.integers(0, len(vocab), size=(len(part), WORDS_PER_CHUNK))
            with cursor.copy(COPY_SQL) as copy:
                copy.set_types(COPY_TYPES)
                for (document_id, ordinal), vector, pick in zip(part, vectors, picks):
                    text = " ".join(vocab[pick])
                    copy.write_row(
                        (
                            document_id,
                            f"{document_id:x}-{ordinal:x}",
                            ordinal,
                            text,
                            ordinal * 500,
                            ordinal * 500 + len(text),
                            1 + ordinal // 4,
                            1 + ordinal // 4,
                            ordinal,
                            "",
                            vector,
                        )
                    )
    return time.perf_counter() - started


def drop_indexes() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS chunk_embedding_hnsw")
        cursor.execute("DROP INDEX IF EXISTS chunk_search_gin")


def build_indexes() -> dict:
    from django.db import connection

    timings = {}
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '3GB'")
        cursor.execute(f"SET max_parallel_maintenance_workers = {max(0, (os.cpu_count() or 1) - 1)}")
        started = time.perf_counter()
        cursor.execute(
            "CREATE INDEX chunk_embedding_hnsw ON ingest_chunk USING hnsw (embedding vector_cosine_ops) "
            "WITH (m = 16, ef_construction = 64)"
        )
        timings["hnsw_build_s"] = round(time.perf_counter() - started, 1)
        started = time.perf_counter()
        cursor.execute("CREATE INDEX chunk_search_gin ON ingest_chunk USING gin (search)")
        timings["gin_build_s"] = round(time.perf_counter() - started, 1)
        cursor.execute("ANALYZE ingest_chunk")
    return timings


def make_documents(engagement, count: int, prefix: str) -> list[int]:
    from ingest.models import Document

    rows = [
        Document(
            engagement=engagement,
            file=f"bench/{prefix}{i}.pdf",
            original_name=f"{prefix}{i}.pdf",
            sha256=hashlib.sha256(f"{prefix}{i}".encode()).hexdigest(),
            title=f"{prefix} {i}",
            status="ready",
        )
        for i in range(count)
    ]
    return [d.pk for d in Document.objects.bulk_create(rows, batch_size=1000)]


def _backend_cpu_ns():
    """CPU time used so far by this connection's PostgreSQL backend (ns, from /proc: the
    embedded server is local), or None when it cannot be read (a remote DATABASE_URL)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    path = f"/proc/{pid}/schedstat"
    if not os.path.exists(path):
        return None

    def read() -> int:
        with open(path) as handle:
            return int(handle.read().split()[0])

    return read


def measure(document_ids: list[int], queries: list[tuple[str, np.ndarray]], method: str, k: int = 5) -> dict:
    """Wall-clock latency of search() (p50/p95), and its CPU time (this thread + the database
    backend; ``cpu_*``): on a shared machine the wall clock includes waiting for a core, the CPU
    time is close to what a quiet machine would take (minus the round trips' wake-ups)."""
    from bench._django import percentiles
    from ingest.search import search

    for text, vector in queries[:5]:  # warm the caches
        search(text, document_ids, k, query_vector=vector, method=method)
    backend_cpu = _backend_cpu_ns()
    samples, cpu = [], []
    off_filter = 0
    for text, vector in queries:
        server = backend_cpu() if backend_cpu else 0
        client = time.thread_time_ns()
        started = time.perf_counter()
        hits = search(text, document_ids, k, query_vector=vector, method=method)
        samples.append(1000 * (time.perf_counter() - started))
        spent = time.thread_time_ns() - client + ((backend_cpu() - server) if backend_cpu else 0)
        cpu.append(spent / 1e6)
        off_filter += sum(1 for h in hits if h.chunk.document_id not in document_ids)
    result = percentiles(samples)
    if backend_cpu:
        result.update({f"cpu_{key}": value for key, value in percentiles(cpu).items() if key != "n"})
    result["hits_outside_filter"] = off_filter
    return result


def fused_vs_two_sides(document_ids: list[int], queries, method: str, k: int = 5) -> dict:
    """search() fuses both sides in one SQL statement; compare its top ``k`` with the two sides
    run apart (vector_candidates, text_candidates) and fused in Python (fuse): share of queries
    with identical (id, score, ranks) lists, and mean top-k id overlap."""
    import ingest.search as s

    same = overlap = 0
    for text, vector in queries:
        hits = s.search(text, document_ids, k, query_vector=vector, method=method)
        depth = max(4 * k, s.MIN_CANDIDATES)
        large = s.chunk_count(document_ids) > s.EXACT_MAX_ROWS
        chosen = s.choose_method(document_ids, large=large) if method == "auto" else method
        pool = s.vector_candidates(
            vector, document_ids, max(depth, s.TEXT_POOL) if large else depth, method=chosen
        )
        text_ids = s.text_candidates(text, document_ids, depth, within=pool if large else None)
        reference = [tuple(row) for row in s.fuse(pool[:depth], text_ids)[:k]]
        got = [(h.chunk.pk, h.score, h.vector_rank, h.text_rank) for h in hits]
        same += got == reference
        overlap += len({row[0] for row in got} & {row[0] for row in reference}) / max(1, len(reference))
    return {
        "identical": round(same / len(queries), 4),
        "top_k_overlap": round(overlap / len(queries), 4),
        "queries": len(queries),
    }


def recall_vs_exact(document_ids: list[int], queries, limit: int = 20) -> float:
    """Share of the exact top-``limit`` vector candidates the HNSW path also returns."""
    from ingest.search import vector_candidates

    found = total = 0
    for _, vector in queries[:30]:
        exact = set(vector_candidates(vector, document_ids, limit, method="exact"))
        approx = set(vector_candidates(vector, document_ids, limit, method="hnsw"))
        found += len(exact & approx)
        total += len(exact)
    return round(found / max(total, 1), 4)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one-doc", type=int, default=10_000, help="chunks in the single large document")
    parser.add_argument(
        "--table-rows", type=int, default=1_000_000, help="grow the table to this many chunks (0: skip)"
    )
    parser.add_argument("--doc-chunks", type=int, default=1_000, help="chunks per document in the big table")
    parser.add_argument("--wide-docs", type=int, default=100, help="documents in the engagement-wide search")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--keep", action="store_true", help="keep the database folder afterwards")
    args = parser.parse_args(argv)
    from bench._django import bench_django, percentiles, speedup

    rng = np.random.default_rng(0)
    with bench_django("search", keep=args.keep):
        from engagements.models import Engagement
        from ingest.embeddings import embed_query

        words = vocabulary()
        queries = [(" ".join(rng.choice(words, size=6)), v) for v in random_units(rng, args.queries)]
        engagement = Engagement.objects.create(name="bench search")
        result: dict = {
            "bench": "search",
            "cores": os.cpu_count(),
            "k": 5,
            "queries": args.queries,
            "load_average_1m_at_start": round(os.getloadavg()[0], 2),
        }

        # --- 1. one document of --one-doc chunks
        (big_doc,) = make_documents(engagement, 1, "big")
        drop_indexes()
        load_s = bulk_chunks([big_doc], args.one_doc, rng, words)
        builds = build_indexes()
        one = {"chunks": args.one_doc, "copy_s": round(load_s, 1), **builds}
        for method in ("exact", "hnsw", "auto"):
            one[method] = measure([big_doc], queries, method)
        one["speedup_vs_exact"] = {m: speedup(one["exact"], one[m]) for m in ("hnsw", "auto")}
        one["hnsw_recall_at_20_vs_exact"] = recall_vs_exact([big_doc], queries)
        one["fused_vs_two_sides"] = {
            m: fused_vs_two_sides([big_doc], queries[:50], m) for m in ("exact", "hnsw")
        }
        one["target_p95_ms"] = 10
        result["one_document"] = one

        # query embedding (ONNX/torch per EMBEDDING_BACKEND), apart from the database side
        embed_query("warm up")
        samples = []
        for text, _ in queries[:30]:
            started = time.perf_counter()
            embed_query(text)
            samples.append(1000 * (time.perf_counter() - started))
        result["query_embedding"] = percentiles(samples)

        # --- 2. the table grown to --table-rows chunks
        if args.table_rows > args.one_doc:
            count = (args.table_rows - args.one_doc + args.doc_chunks - 1) // args.doc_chunks
            doc_ids = make_documents(engagement, count, "doc")
            drop_indexes()
            load_s = bulk_chunks(doc_ids, args.doc_chunks, rng, words)
            builds = build_indexes()
            from ingest.models import Chunk

            table = {
                "rows": Chunk.objects.count(),
                "documents": count + 1,
                "copy_s": round(load_s, 1),
                **builds,
            }
            middle = [doc_ids[len(doc_ids) // 2]]
            table["one_document_exact"] = measure(middle, queries, "exact")
            table["one_document_auto"] = measure(middle, queries, "auto")
            table["one_document_hnsw"] = measure(middle, queries, "hnsw")
            table["large_document_exact"] = measure([big_doc], queries, "exact")
            table["large_document_auto"] = measure([big_doc], queries, "auto")
            wide = doc_ids[: args.wide_docs]
            table["wide_search_docs"] = len(wide)
            table["wide_auto"] = measure(wide, queries, "auto")
            table["wide_exact"] = measure(wide, queries[:20], "exact")  # slow by nature: 20 queries
            wide_auto_20 = measure(wide, queries[:20], "auto")  # the same 20 queries, for the ratio
            table["speedup_vs_exact"] = {
                "one_document": {
                    m: speedup(table["one_document_exact"], table[f"one_document_{m}"])
                    for m in ("hnsw", "auto")
                },
                "large_document": {
                    "auto": speedup(table["large_document_exact"], table["large_document_auto"])
                },
                "wide": {"auto": speedup(table["wide_exact"], wide_auto_20), "queries": 20},
            }
            table["wide_hnsw_recall_at_20_vs_exact"] = recall_vs_exact(wide, queries)
            table["target_p95_ms"] = 50
            result["big_table"] = table
    result["load_average_1m_at_end"] = round(os.getloadavg()[0], 2)  # other work on the machine skews timings
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
