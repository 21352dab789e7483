"""How much of the true vector order the quantized pass keeps, on real contract embeddings.

``ingest.search`` ranks a large document set's chunks by the Hamming distance of their sign bits and
re-ranks only the nearest ``QUANTIZED_OVERSAMPLE`` x pool by true cosine distance. On an engagement of
1,000 contracts (200,000 chunks) that pass keeps 2,000 chunks: 1% of them. Random vectors (the latency
bench's) have no structure for the bits to keep; a model's embeddings do, and this bench measures it.

Every chunk of the ingested cuad-dev contracts is searched with each catalog type's query (what a user
types into the engagement search box is no different in kind). For each query: the exact top ``k`` by
cosine, and the top ``k`` after a Hamming pass that keeps ``share`` of the chunks, re-ranked by cosine.
``recall``: the share of the exact top ``k`` the quantized answer holds (mean and worst query), for
k = 10 and 40 (the engagement search shows 40 hits) and shares 0.5%, 1%, 2%. A top 40 of 200,000 chunks
is a far smaller share than a top 40 of this corpus, so these figures are the harder case.

Runs on the database named by ``EMBEDDED_DIR``/``MEDIA_ROOT`` when it holds chunks (e.g. an ``evaluate``
run's); otherwise a throw-away one gets ``--docs`` contracts first.
Data: CUAD v1, The Atticus Project (CC BY 4.0), read from ``../shared/eval/cuad-dev`` (never copied).

Usage: ``python -m bench.bench_quantized_recall [--docs 30]``  (prints one JSON object)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._cuad import CREDIT, CUAD, load  # noqa: E402

SHARES = (0.005, 0.01, 0.02)
TOPS = (2, 10, 40)


def recall_table(embeddings, queries) -> dict:
    """``{"k=10": {"share=1.0%": {"mean": .., "worst": ..}}}`` for the chunks' and queries' vectors."""
    import numpy as np

    unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    bits = embeddings > 0
    table: dict = {}
    for k in TOPS:
        row = table.setdefault(f"k={k}", {})
        for share in SHARES:
            keep = max(k, round(share * len(embeddings)))
            found = []
            for query in queries:
                cosine = unit @ (query / np.linalg.norm(query))
                exact = np.argsort(-cosine, kind="stable")[:k]
                hamming = (bits != (query > 0)).sum(axis=1)
                kept = np.argsort(hamming, kind="stable")[:keep]
                quantized = kept[np.argsort(-cosine[kept], kind="stable")][:k]
                found.append(len(set(exact.tolist()) & set(quantized.tolist())) / k)
            row[f"share={100 * share:.1f}%"] = {
                "kept": keep,
                "mean": round(float(np.mean(found)), 3),
                "worst": round(float(np.min(found)), 3),
            }
    return table


def ingest_some(corpus: Path, docs: int) -> None:
    from engagements.models import Engagement
    from ingest.intake import intake_file
    from ingest.pipeline import run_pipeline

    listed, _ = load(corpus, docs, set())
    engagement = Engagement.objects.create(name="bench quantized recall")
    for meta in listed:
        path = corpus / meta["pdf"]
        run_pipeline(intake_file(engagement, path, filename=path.name, enqueue=False).document.pk)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=30, help="contracts to ingest when the database has none")
    parser.add_argument("--corpus", type=Path, default=CUAD)
    args = parser.parse_args(argv)
    if not (args.corpus / "gold.jsonl").exists():
        result = {"bench": "quantized_recall", "skipped": f"no corpus at {args.corpus}"}
        print(json.dumps(result, indent=2))
        return result
    from bench._django import bench_django

    with bench_django("quantized-recall"):
        import numpy as np

        from extraction.catalog import CATALOG
        from ingest.embeddings import embed_query
        from ingest.models import Chunk

        if not Chunk.objects.exclude(embedding=None).exists():
            ingest_some(args.corpus, args.docs)
        vectors = Chunk.objects.exclude(embedding=None).values_list("embedding", flat=True)
        embeddings = np.array([np.asarray(v, dtype=np.float32) for v in vectors])
        queries = np.array([embed_query(c.query) for c in CATALOG], dtype=np.float32)
        result = {
            "bench": "quantized_recall",
            "credit": CREDIT,
            "chunks": len(embeddings),
            "queries": len(queries),
            "recall": recall_table(embeddings, queries),
        }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
