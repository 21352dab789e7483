"""The words of a passage as the finder's scorers read them: tf-idf over words and word pairs.

The embeddings place a passage by its meaning, and blur the phrases a clause type is named by ("change
of control", "most favored", "third party beneficiary"); the scorers read those phrases here. A passage
becomes one sparse row: each term of the vocabulary (a content word's stem, as
``extraction.lexical.terms`` reads it, or two such stems in a row) weighs ``(1 + ln tf) * idf``, with
``idf = ln((1 + n) / (1 + df)) + 1`` over the ``n`` training sentences, and the row has unit length.
The vocabulary is the ``MAX_TERMS`` terms found in the most training sentences, each in
``MIN_SENTENCES`` at least.

Pure: plain text in, scipy sparse rows out.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from extraction import lexical

MAX_TERMS = 50_000
MIN_SENTENCES = 3


def passage_terms(text: str) -> list[str]:
    """The content-word stems of ``text``, then each pair of neighbouring stems (space-joined: the
    artifact's vocabulary spells its pairs so)."""
    return lexical.terms_and_pairs(text)


@dataclass(frozen=True)
class Vocabulary:
    terms: tuple[str, ...]
    idf: np.ndarray  # (terms,)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {t: i for i, t in enumerate(self.terms)})

    def __len__(self) -> int:
        return len(self.terms)

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        """The terms as UTF-8 bytes, one a line (no term holds a newline), and their idf."""
        text = "\n".join(self.terms).encode("utf-8")
        return {f"{prefix}_terms": np.frombuffer(text, dtype=np.uint8), f"{prefix}_idf": self.idf}

    @classmethod
    def from_arrays(cls, arrays, prefix: str) -> Vocabulary:
        text = np.asarray(arrays[f"{prefix}_terms"], dtype=np.uint8).tobytes().decode("utf-8")
        terms = tuple(text.split("\n")) if text else ()
        return cls(terms, np.asarray(arrays[f"{prefix}_idf"], dtype=np.float32))

    def rows(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """One unit-length tf-idf row per text (a text with no known term is a zero row)."""
        index: dict[str, int] = self._index  # type: ignore[attr-defined]
        indptr, indices, values = [0], [], []
        for text in texts:
            counts = Counter(index[t] for t in passage_terms(text) if t in index)
            cols = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
            tf = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
            weights = (1.0 + np.log(tf)) * self.idf[cols] if len(cols) else tf
            norm = math.sqrt(float(weights @ weights)) if len(cols) else 1.0
            indices.extend(cols.tolist())
            values.extend((weights / norm).tolist())
            indptr.append(len(indices))
        return sparse.csr_matrix(
            (np.asarray(values, dtype=np.float32), np.asarray(indices, dtype=np.int64), indptr),
            shape=(len(texts), len(self.terms)),
        )


def fit_vocabulary(
    texts: Iterable[str], *, max_terms: int = MAX_TERMS, min_sentences: int = MIN_SENTENCES
) -> Vocabulary:
    """The vocabulary of ``texts`` (the training sentences): the terms in the most of them."""
    df: Counter[str] = Counter()
    n = 0
    for text in texts:
        df.update(set(passage_terms(text)))
        n += 1
    kept = sorted((t for t, k in df.items() if k >= min_sentences), key=lambda t: (-df[t], t))[:max_terms]
    kept.sort()
    idf = np.array([math.log((1 + n) / (1 + df[t])) + 1.0 for t in kept], dtype=np.float32)
    return Vocabulary(tuple(kept), idf)
