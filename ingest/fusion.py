"""Reciprocal rank fusion: several ranked lists of ids into one. Pure.

An id's score is ``sum(weight / (RRF_K + rank))`` over the lists holding it (ranks from 1, weight 1
unless given). ``ingest.search`` fuses its vector and full-text sides with :func:`fuse` (and the
same arithmetic in SQL, ``FUSED_SQL``); clause retrieval (``extraction.retrieval``) fuses its
weighted lists with :func:`rrf`. Both add each list's share in list order, so the floats agree.
"""

from __future__ import annotations

from collections.abc import Sequence

RRF_K = 60  # why 60: docs/decisions.md, RRF_K


def scores(
    lists: Sequence[Sequence[int]], rrf_k: int = RRF_K, weights: Sequence[float] | None = None
) -> dict[int, float]:
    """Each id's fused score, in the order ids are first seen."""
    out: dict[int, float] = {}
    for i, ids in enumerate(lists):
        weight = 1.0 if weights is None else weights[i]
        for rank, pk in enumerate(ids, start=1):
            out[pk] = out.get(pk, 0.0) + weight / (rrf_k + rank)
    return out


def rrf(
    lists: Sequence[Sequence[int]], rrf_k: int = RRF_K, weights: Sequence[float] | None = None
) -> list[tuple[int, float]]:
    """``[(id, score)]`` best first; ties keep the order ids are first seen."""
    return sorted(scores(lists, rrf_k, weights).items(), key=lambda kv: -kv[1])


def fuse(*ranked: Sequence[int], rrf_k: int = RRF_K) -> list[tuple[int, float, int | None, int | None]]:
    """Fusion of a vector and a text list: ``(pk, score, vector_rank, text_rank)`` best first; ties go
    to the better vector rank, then the lower pk, so results are deterministic."""
    ranks: dict[int, list[int | None]] = {}
    for which, ids in enumerate(ranked):
        for rank, pk in enumerate(ids, start=1):
            ranks.setdefault(pk, [None] * len(ranked))[which] = rank
    fused = scores(ranked, rrf_k)
    rows: list[tuple[int, float, int | None, int | None]] = []
    for pk, rs in ranks.items():
        vector_rank, text_rank = (rs + [None, None])[:2]
        rows.append((pk, fused[pk], vector_rank, text_rank))
    rows.sort(key=lambda row: (-row[1], row[2] if row[2] is not None else 1 << 30, row[0]))
    return rows
