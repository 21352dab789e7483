"""Embedding speed and quality: torch fp32 (the baseline) against ONNX int8, in the same run.

Speed: chunks per second on real chunks of a generated contract (``demo.make_contract_pdf``
→ ``convert_file`` → ``chunk_document``), each backend warmed up first, both on all cores.

Quality (when the CUAD dev folder is there; ``--docs 0`` skips it): every contract is
converted and chunked by the real pipeline, its chunks embedded by both backends, and for
each (contract, clause type present) the catalog's retrieval query (``extraction.catalog``)
picks the 5 nearest chunks by cosine (vector side only: the full-text side of hybrid search
does not depend on the backend). ``recall_at_5``: share of those pairs where a top-5 chunk
contains a gold part (text compared lower-case, letters and digits only; a part counts when
its first or last 40 such characters are inside the chunk). Also the cosine between the
two backends' vectors of the same chunk and the overlap of their top-5 lists.
Data: CUAD v1, The Atticus Project (CC BY 4.0).

Usage: ``python -m bench.bench_embeddings [--chunks 256] [--docs 30] [--corpus DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench._cuad import CREDIT, CUAD, load, norm, probes
from bench._django import ratio

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def sample_chunks(n: int) -> list[str]:
    from demo import make_contract_pdf
    from ingest.chunker import chunk_document
    from ingest.convert import convert_file

    with tempfile.TemporaryDirectory() as folder:
        pages = 12
        while True:
            truth = make_contract_pdf(Path(folder) / "c.pdf", pages=pages, seed=11)
            converted = convert_file(truth.path)
            texts = [c.text for c in chunk_document(converted.text, converted.pages)]
            if len(texts) >= n or pages >= 400:
                return texts[:n]
            pages = int(pages * max(1.5, 1.1 * n / max(len(texts), 1)))


def speed(texts: list[str], backend: str) -> dict:
    from ingest.embeddings import get_embedder

    started = time.perf_counter()
    embedder = get_embedder(backend)
    embedder.encode(texts[:16])
    load_s = time.perf_counter() - started
    started, cpu_started = time.perf_counter(), _cpu_seconds()
    embedder.encode(texts)
    seconds, cpu = time.perf_counter() - started, _cpu_seconds() - cpu_started
    return {
        "chunks": len(texts),
        "seconds": round(seconds, 2),
        "chunks_per_s": round(len(texts) / seconds, 1),
        "cpu_seconds": round(cpu, 2),
        "chunks_per_cpu_s": round(len(texts) / cpu, 1),
        "load_and_warmup_s": round(load_s, 2),
    }


def _cpu_seconds() -> float:
    """CPU time of this process, all threads (wall time stretches when other work shares the cores)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def quality(corpus: Path, docs: int) -> dict:
    from extraction.catalog import CATALOG
    from ingest.chunker import chunk_document
    from ingest.convert import ConversionError, convert_file
    from ingest.embeddings import get_embedder

    queries = {c.name: c.query for c in CATALOG}
    listed, gold = load(corpus, docs, set(queries))

    torch_model, onnx_model = get_embedder("torch"), get_embedder("onnx")
    query_names = sorted({row["clause_type"] for rows in gold.values() for row in rows})
    q_torch = dict(zip(query_names, torch_model.encode([queries[n] for n in query_names])))
    q_onnx = dict(zip(query_names, onnx_model.encode([queries[n] for n in query_names])))
    hits = {"torch": 0, "onnx": 0}
    pairs = chunks_total = 0
    overlaps: list[float] = []
    cosines: list[np.ndarray] = []
    timing = {"torch": 0.0, "onnx": 0.0}
    for meta in listed:
        try:
            converted = convert_file(corpus / meta["pdf"])
        except ConversionError:
            continue
        chunks = chunk_document(converted.text, converted.pages)
        texts = [c.text for c in chunks]
        normalised = [norm(t) for t in texts]
        started = time.perf_counter()
        v_torch = torch_model.encode(texts)
        timing["torch"] += time.perf_counter() - started
        started = time.perf_counter()
        v_onnx = onnx_model.encode(texts)
        timing["onnx"] += time.perf_counter() - started
        chunks_total += len(texts)
        cosines.append((v_torch * v_onnx).sum(axis=1))
        for row in gold.get(meta["doc"], []):
            wanted, _ = probes(row)
            if not wanted:
                continue
            pairs += 1
            tops = {}
            for name, vectors, qv in (("torch", v_torch, q_torch), ("onnx", v_onnx, q_onnx)):
                top = np.argsort(-(vectors @ qv[row["clause_type"]]))[:5]
                tops[name] = set(top.tolist())
                hits[name] += any(p in normalised[i] for i in top for p in wanted)
            overlaps.append(len(tops["torch"] & tops["onnx"]) / max(len(tops["torch"]), 1))
    cos = np.concatenate(cosines) if cosines else np.zeros(1)
    recall = {name: round(hits[name] / pairs, 4) if pairs else None for name in hits}
    return {
        "documents": len(listed),
        "chunks": chunks_total,
        "query_doc_pairs": pairs,
        "recall_at_5": recall,
        "recall_delta_points": round(100 * (recall["onnx"] - recall["torch"]), 2) if pairs else None,
        "top5_overlap_mean": round(float(np.mean(overlaps)), 4) if overlaps else None,
        "cosine_torch_vs_onnx": {
            "mean": round(float(cos.mean()), 4),
            "p05": round(float(np.percentile(cos, 5)), 4),
            "min": round(float(cos.min()), 4),
        },
        "corpus_chunks_per_s": {k: round(chunks_total / v, 1) for k, v in timing.items() if v},
        "corpus_onnx_over_torch": ratio(timing["torch"], timing["onnx"]),  # the same chunks: torch s / onnx s
        "credit": CREDIT,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=256, help="chunks embedded for the speed figures")
    parser.add_argument("--docs", type=int, default=30, help="CUAD contracts for quality (0: skip; all: 89)")
    parser.add_argument("--corpus", type=Path, default=CUAD)
    args = parser.parse_args(argv)
    import torch

    texts = sample_chunks(args.chunks)
    result = {
        "bench": "embeddings",
        "model": "all-MiniLM-L6-v2",
        "cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "load_average_1m_at_start": round(os.getloadavg()[0], 2),
        "chunk_chars_mean": round(sum(map(len, texts)) / len(texts)),
        "torch_fp32": speed(texts, "torch"),
        "onnx_int8": speed(texts, "onnx"),
    }
    result["onnx_over_torch"] = round(
        result["onnx_int8"]["chunks_per_s"] / result["torch_fp32"]["chunks_per_s"], 2
    )
    result["onnx_over_torch_per_cpu_s"] = round(
        result["onnx_int8"]["chunks_per_cpu_s"] / result["torch_fp32"]["chunks_per_cpu_s"], 2
    )
    result["target_ratio"] = 2.0
    if args.docs and (args.corpus / "gold.jsonl").exists():
        result["quality"] = quality(args.corpus, args.docs)
    elif args.docs:
        result["quality"] = {"skipped": f"no corpus at {args.corpus} (the cuad-dev folder, see README.md)"}
    result["load_average_1m_at_end"] = round(os.getloadavg()[0], 2)  # other work on the machine skews timings
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
