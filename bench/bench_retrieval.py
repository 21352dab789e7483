"""Retrieval recall@k of :func:`ingest.search.search` on the CUAD dev contracts: vector only,
full text only, and the hybrid (RRF) that extraction gets.

Contracts go through the real pipeline (``intake_file`` + ``run_pipeline``) into a throw-away
embedded PostgreSQL. For each (contract, clause type present in gold) the catalog's retrieval
query (``extraction.catalog``) is searched in that contract alone; a pair counts as found when
one of the top ``k`` chunks contains a gold part (compared lower-case, letters and digits
only; a part counts when its first or last 40 such characters are inside the chunk). Also
reported per method: the page hit rate (a top-k chunk's pages include a gold part's page), and
the latency per (contract, clause type) query (p50/p95: the vector side's and the text side's own
SQL calls; hybrid is both plus the fusion, as it pays for both).

Baseline: the vector search alone, the one query a plain RAG makes, on the same pairs in the same
run. ``vs_vector`` gives each method's recall and page hit rate over the baseline's (ours /
baseline; > 1: finds more) and its latency over the baseline's (``slowdown``: ours ms / baseline
ms; > 1: slower), so the hybrid's extra recall is read next to what the second query costs.
Data: CUAD v1, The Atticus Project (CC BY 4.0).

Usage: ``python -m bench.bench_retrieval [--docs 30] [--k 5] [--corpus DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from bench._cuad import CREDIT, CUAD, load, norm, probes

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=30, help="contracts (evenly spread; 0 = all 89)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=CUAD)
    args = parser.parse_args(argv)
    if not (args.corpus / "gold.jsonl").exists():
        result = {"bench": "retrieval", "skipped": f"no corpus at {args.corpus}"}
        print(json.dumps(result, indent=2))
        return result
    from bench._django import bench_django, percentiles, ratio

    with bench_django("retrieval"):
        from engagements.models import Engagement
        from extraction.catalog import CATALOG
        from ingest.embeddings import embed_query
        from ingest.fusion import fuse
        from ingest.intake import intake_file
        from ingest.models import Chunk
        from ingest.pipeline import run_pipeline
        from ingest.search import text_candidates, vector_candidates

        queries = {c.name: c.query for c in CATALOG}
        listed, gold = load(args.corpus, args.docs, set(queries))
        engagement = Engagement.objects.create(name="bench retrieval")
        started = time.perf_counter()
        documents = {}
        for meta in listed:
            path = args.corpus / meta["pdf"]
            document = intake_file(engagement, path, filename=path.name, enqueue=False).document
            if run_pipeline(document.pk):
                documents[meta["doc"]] = document
        ingest_s = time.perf_counter() - started

        vectors = {name: embed_query(q) for name, q in queries.items()}
        methods = ("vector", "text", "hybrid")
        found = {m: 0 for m in methods}
        page_hits = {m: 0 for m in methods}
        latency_ms = {m: [] for m in methods}
        pairs = paged = 0
        for doc, document in documents.items():
            chunks = {c.pk: c for c in Chunk.objects.filter(document=document).defer("embedding", "search")}
            normalised = {pk: norm(c.text) for pk, c in chunks.items()}
            for name in list(queries)[
                :1
            ]:  # warm both sides on this document: no first-call cost in one side's figures
                vector_candidates(vectors[name], [document.pk], 20, method="exact")
                text_candidates(queries[name], [document.pk], 20)
            for row in gold.get(doc, []):
                wanted, pages = probes(row)
                if not wanted:
                    continue
                pairs += 1
                paged += bool(pages)
                depth = max(4 * args.k, 20)
                t0 = time.perf_counter()
                v = vector_candidates(vectors[row["clause_type"]], [document.pk], depth, method="exact")
                t1 = time.perf_counter()
                t = text_candidates(queries[row["clause_type"]], [document.pk], depth)
                t2 = time.perf_counter()
                hybrid = [pk for pk, *_ in fuse(v, t)][: args.k]
                t3 = time.perf_counter()
                latency_ms["vector"].append(1000 * (t1 - t0))
                latency_ms["text"].append(1000 * (t2 - t1))
                latency_ms["hybrid"].append(1000 * (t3 - t0))
                ranked = {"vector": v[: args.k], "text": t[: args.k], "hybrid": hybrid}
                for method, top in ranked.items():
                    found[method] += any(p in normalised[pk] for pk in top for p in wanted)
                    page_hits[method] += bool(pages) and any(
                        pages & set(range(chunks[pk].page_start, chunks[pk].page_end + 1)) for pk in top
                    )
        recall = {m: round(found[m] / pairs, 4) if pairs else None for m in methods}
        page_hit = {m: round(page_hits[m] / paged, 4) if paged else None for m in methods}
        latency = {m: percentiles(latency_ms[m]) if latency_ms[m] else None for m in methods}
        base = latency["vector"] or {}
        result = {
            "bench": "retrieval",
            "k": args.k,
            "documents": len(documents),
            "chunks": Chunk.objects.count(),
            "query_doc_pairs": pairs,
            "ingest_s": round(ingest_s, 1),
            f"recall_at_{args.k}": recall,
            f"page_hit_at_{args.k}": page_hit,
            "latency_ms": latency,
            "vs_vector": {
                m: {
                    "recall_ratio": ratio(recall[m], recall["vector"], 3),
                    "page_hit_ratio": ratio(page_hit[m], page_hit["vector"], 3),
                    "slowdown_p50": ratio((latency[m] or {}).get("p50_ms"), base.get("p50_ms")),
                    "slowdown_p95": ratio((latency[m] or {}).get("p95_ms"), base.get("p95_ms")),
                }
                for m in ("text", "hybrid")
            },
            "credit": CREDIT,
        }
    result["load_average_1m_at_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
