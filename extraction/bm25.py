"""Okapi BM25 over one document's chunks: the lexical leg of a clause question. Pure.

PostgreSQL's ``ts_rank`` (``ingest.search``) weighs every query word alike, but in a contract
"agreement", "party" and "term" are in most chunks while "escrow" is in one. BM25 weighs a word
by how rare it is among the document's own chunks (inverse document frequency), lets repeats of
a word count less and less (``K1``) and evens out chunk length (``B``), the usual defaults.
It retrieves more clause parts than ``ts_rank`` as the full-text list of each query variant
(docs/decisions.md, extraction.bm25.K1 and extraction.bm25.B).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class Bm25Index:
    ids: tuple[int, ...]
    tfs: tuple[Counter, ...]  # per chunk: term -> count
    lengths: tuple[int, ...]
    df: Counter  # term -> chunks holding it
    avg_length: float

    @classmethod
    def build(cls, items: Iterable[tuple[int, str]], tokenize: Callable[[str], list[str]]) -> Bm25Index:
        ids, tfs = [], []
        for pk, text in items:
            ids.append(pk)
            tfs.append(Counter(tokenize(text)))
        lengths = tuple(sum(tf.values()) for tf in tfs)
        df = Counter(term for tf in tfs for term in tf)
        return cls(tuple(ids), tuple(tfs), lengths, df, sum(lengths) / len(lengths) if lengths else 0.0)

    def idf(self, term: str) -> float:
        n, df = len(self.ids), self.df.get(term, 0)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def rank(self, query_terms: Iterable[str], limit: int) -> list[int]:
        """Ids of the chunks holding any query term, best BM25 score first (ties: reading order)."""
        weights = {t: self.idf(t) for t in set(query_terms) if t in self.df}
        if not weights:
            return []
        scored = []
        for i, tf in enumerate(self.tfs):
            norm = K1 * (1.0 - B + B * self.lengths[i] / (self.avg_length or 1.0))
            score = sum(w * tf[t] * (K1 + 1.0) / (tf[t] + norm) for t, w in weights.items() if t in tf)
            if score > 0:
                scored.append((-score, i))
        scored.sort()
        return [self.ids[i] for _, i in scored[:limit]]
