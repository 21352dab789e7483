"""The clause finder's weights and what they compute: plain numpy over plain arrays.

Two linear scorers share one form (``Scorer``), one column per clause type:

* the **sentence scorer** reads a sentence's embedding, its chunk's embedding (the context: a heading
  above it, the clause it belongs to), the sentence's cues, its relation to each type's wordings and its
  words;
* the **chunk scorer** reads a chunk's embedding, cues, relation to each type's wordings and words; it
  ranks a whole document's chunks for retrieval's fusion without embedding a single sentence.

``logit = x·W[:, t] + h_t·U[:, t] + v·V[:, t] + b[t]`` with ``x`` the standardised shared row (embeddings
and cues), ``h_t`` the passage's ``TYPE_FEATURES`` against type ``t`` and ``v`` its words' tf-idf row
(``extraction.finder.words``; a scorer fitted without words has no ``V``);
``extraction.finder.training.fit_scorer`` learns them, every type at once (a sentence may hold two
clauses: the preamble names the parties and the date, so each type is its own yes/no).

Whether a clause is in a document at all is a second, small model (``extraction.offline.presence``)
over the scorers' best logits; ``ClauseFinder`` bundles the three with the decision threshold, the
words' vocabulary and the reader's options, as the artifact stores them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from extraction.finder.words import Vocabulary
from extraction.offline.presence import PresenceModel

PRESENCE_FEATURES = ("sentence_best", "sentence_margin", "chunk_best")


@dataclass
class Scorer:
    types: tuple[str, ...]
    mean: np.ndarray  # (D,) of the shared row
    scale: np.ndarray  # (D,)
    w: np.ndarray  # (D, T)
    u: np.ndarray  # (H, T)
    b: np.ndarray  # (T,)
    v: np.ndarray | None = None  # (terms, T): the words' weights

    def column(self, name: str) -> int | None:
        try:
            return self.types.index(name)
        except ValueError:
            return None

    def logits(
        self,
        x: np.ndarray,
        h: np.ndarray,
        columns: Sequence[int] | None = None,
        words: sparse.csr_matrix | None = None,
    ) -> np.ndarray:
        """(passages x types) logits; ``h`` is (passages x types x H) for the same ``columns``, ``words``
        the passages' tf-idf rows, required when the scorer has word weights (without them its logits
        would be quietly wrong)."""
        if self.v is not None and words is None:
            raise ValueError("this scorer reads words: pass the passages' tf-idf rows")
        cols = list(range(len(self.types))) if columns is None else list(columns)
        xs = (np.asarray(x, dtype=np.float32) - self.mean) / self.scale
        out = xs @ self.w[:, cols] + self.b[cols]
        if self.v is not None:
            out = out + np.asarray(words @ self.v[:, cols], dtype=np.float32)
        return out + np.einsum("nth,ht->nt", h, self.u[:, cols])

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        kept = {"mean": self.mean, "scale": self.scale, "w": self.w, "u": self.u, "b": self.b, "v": self.v}
        return {f"{prefix}_{k}": a for k, a in kept.items() if a is not None}

    @classmethod
    def from_arrays(cls, types: Sequence[str], arrays, prefix: str) -> Scorer:
        def read(k: str) -> np.ndarray:
            return np.asarray(arrays[f"{prefix}_{k}"], dtype=np.float32)

        v = read("v") if f"{prefix}_v" in arrays else None
        return cls(tuple(types), read("mean"), read("scale"), read("w"), read("u"), read("b"), v)


def presence_row(
    sentence_logits: Sequence[float] | np.ndarray, chunk_logits: Sequence[float] | np.ndarray
) -> dict[str, float]:
    """The presence model's features of one (document, type) pair: the best sentence logit among the
    sentences read, its lead over the runner-up, and the best chunk logit of the whole document."""
    s = sorted(sentence_logits, reverse=True)
    best = s[0] if s else -30.0
    second = s[1] if len(s) > 1 else best - 1.0
    return {
        "sentence_best": float(best),
        "sentence_margin": float(best - second),
        "chunk_best": float(max(chunk_logits)) if len(chunk_logits) else -30.0,
    }


def lead_by_sentences(
    order: Sequence[int],
    spans: Sequence[tuple[int, int]],
    sentences: Sequence[tuple[int, int, float]],
    pool: int,
) -> list[int]:
    """``order`` (chunk indices, best first by the chunk scorer; ``spans[i]``: chunk ``i``'s start and
    end) with its first ``pool`` reordered by the best logit of a sentence (start, end, logit) lying
    whole inside each. A chunk that holds no scored sentence counts -30; equal bests keep ``order``.
    The sentence scorer reads the sentence with its chunk, so it tells the chunk that states a clause
    from one that shares its words (a definition, a cross-reference)."""
    head = list(order[:pool])

    def best(i: int) -> float:
        a, b = spans[i]
        return max((z for s, e, z in sentences if a <= s and e <= b), default=-30.0)

    bests = {i: best(i) for i in head}
    return sorted(head, key=lambda i: -bests[i]) + list(order[pool:])


@dataclass(frozen=True)
class Reading:
    """What the finder reads passages of one type with: its sentence and chunk scorers and the type's
    column in them, the presence model, the decision threshold and its statement's confidence."""

    sentence: Scorer
    chunk: Scorer
    column: int
    presence: PresenceModel
    clause_type: str
    threshold: float
    vocabulary: Vocabulary
    stated_confidence: float | None = None  # how sure a stated sentence makes it present; None: no statement

    def words(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """The passages' tf-idf rows, as the scorers read them."""
        return self.vocabulary.rows(texts)


class ClauseFinder:
    """Everything the artifact holds: the scorers, the presence model and its threshold, how many of a
    document's best chunks the finder reads per type, the statements kept for the types with few
    examples (type -> what ``statements.select`` measured), the reader's options and the artifact's
    facts."""

    def __init__(
        self,
        sentence: Scorer,
        chunk: Scorer,
        presence: PresenceModel,
        threshold: float,
        top_chunks: int,
        vocabulary: Vocabulary,
        options: dict | None = None,
        meta: dict | None = None,
        statements: dict[str, dict] | None = None,
    ):
        self.sentence = sentence
        self.chunk = chunk
        self.vocabulary = vocabulary  # the terms the scorers' word weights are over
        self.presence = presence
        self.threshold = threshold
        self.top_chunks = top_chunks
        self.options = dict(options or {})
        self.meta = dict(meta or {})
        self.statements = dict(statements or {})

    @property
    def types(self) -> tuple[str, ...]:
        return self.sentence.types

    def knows(self, clause_type: str) -> bool:
        """Fitted on labelled examples of ``clause_type``."""
        return self.sentence.column(clause_type) is not None

    def reading(self, clause_type: str) -> Reading | None:
        """How the finder reads ``clause_type``; None for a type it was not fitted on."""
        column = self.sentence.column(clause_type)
        if column is None:
            return None
        stated = self.statements.get(clause_type)
        return Reading(
            self.sentence,
            self.chunk,
            column,
            self.presence,
            clause_type,
            self.threshold,
            self.vocabulary,
            float(stated["confidence"]) if stated else None,
        )
