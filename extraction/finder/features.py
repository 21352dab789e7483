"""What the clause finder reads of a passage (a sentence or a chunk): plain functions over plain data.

A passage is described twice:

* ``cue_vector``: cues that hold whatever the clause type, each 0/1 or a small number: is it a heading,
  a definition, a recital; does it bind someone (an operative word), name a cause, a date, an amount,
  a percentage, a party, a title; where it sits in the document; how long it is. The finder learns
  one weight per cue and type: a date helps an Agreement Date sentence and says nothing of Governing Law.
* ``type_vectors``: how the passage relates to each clause type's own wordings: the share of the
  type's query terms and bigrams it holds (as ``reader.lexical_score`` counts them), whether its
  section heading names the type, and its embedding cosine to the type's query and to its example
  clause. These let a type with few labelled examples still rank passages: they need no training data.

The embedding of the passage itself (and, for a sentence, of the chunk around it) completes the row;
``extraction.finder.model`` holds the weights.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from extraction.lexical import terms
from extraction.offline.reader import (
    _DATE,
    _PARTY,
    _TITLE,
    CAUSE,
    DEFINITION,
    LEX_SCALE,
    NO_CAUSE,
    OPERATIVE,
    RECITAL,
    names_a_clause,
)
from ingest.chunker import ChunkSpec
from ingest.sentences import evidence_sentences

_MONEY = re.compile(r"[$€£¥]\s?\d|\b(?:USD|EUR|GBP|dollars?)\b", re.I)
_PERCENT = re.compile(r"\d\s?%|\bper\s?cent\b|\bpercent(?:age)?\b", re.I)
_DURATION = re.compile(
    r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|thirty|sixty|ninety)"
    r"\s*(?:\(\d+\)\s*)?(?:days?|months?|years?)\b",
    re.I,
)

CUES = (
    "heading",
    "definition",
    "recital",
    "operative",
    "cause",
    "no_cause",
    "date",
    "money",
    "percent",
    "duration",
    "party",
    "title",
    "opening",  # in the document's first chunk
    "position",  # where the passage starts, 0 (first character) .. 1 (last)
    "length",  # log of its words
)
TYPE_FEATURES = ("lexical", "section", "cos_query", "cos_example")


@dataclass(frozen=True)
class Sentence:
    """One sentence of a document: where it is, what it says, which chunk holds it (its index in the
    document's chunks, the first one that holds it whole)."""

    start: int
    end: int
    text: str
    chunk: int


def document_sentences(
    chunks: Sequence[ChunkSpec], furniture: Sequence[tuple[int, int]] = ()
) -> list[Sentence]:
    """Every sentence of a document's ``chunks`` once, in document order: a sentence repeated by the
    chunks' overlap is kept in the first chunk that holds it, a fragment cut by a chunk edge is dropped
    when a fuller copy contains it, and a sentence inside page furniture (running headers and footers)
    is left out."""
    found: dict[tuple[int, int], tuple[int, str]] = {}
    for index, c in enumerate(chunks):
        for s, e in evidence_sentences(c.text):
            found.setdefault((c.char_start + s, c.char_start + e), (index, c.text[s:e]))
    spans = sorted(found)
    out = []
    widest_end = -1  # the furthest end of the spans starting before this one
    for i, (s, e) in enumerate(spans):
        longer_twin = i + 1 < len(spans) and spans[i + 1][0] == s  # same start, a later end
        covered = widest_end >= e or longer_twin
        widest_end = max(widest_end, e)
        if covered or any(a <= s and e <= b for a, b in furniture):
            continue
        index, text = found[(s, e)]
        out.append(Sentence(s, e, text, index))
    return out


def cue_vector(text: str, *, start: int, doc_chars: int, opening: bool) -> list[float]:
    """The ``CUES`` of one passage, in that order."""
    return [
        float(names_a_clause(text)),
        float(bool(DEFINITION.match(text))),
        float(bool(RECITAL.match(text))),
        float(bool(OPERATIVE.search(text))),
        float(bool(CAUSE.search(text))),
        float(bool(NO_CAUSE.search(text))),
        float(bool(_DATE.search(text))),
        float(bool(_MONEY.search(text))),
        float(bool(_PERCENT.search(text))),
        float(bool(_DURATION.search(text))),
        float(bool(_PARTY.search(text))),
        float(bool(_TITLE.search(text))),
        float(opening),
        start / doc_chars if doc_chars else 0.0,
        math.log1p(len(text.split())),
    ]


@dataclass(frozen=True)
class TypeWording:
    """A clause type as the finder compares passages with it: its query terms, the content words of
    its name, and unit vectors of its query and example clause (zero when it has no example)."""

    name: str
    query_terms: tuple[str, ...]
    name_terms: frozenset[str]
    query_vec: np.ndarray
    example_vec: np.ndarray


def type_vectors(
    texts: Sequence[str], sections: Sequence[str], vectors: np.ndarray, types: Sequence[TypeWording]
) -> np.ndarray:
    """``TYPE_FEATURES`` of each passage against each type: an array (passages x types x features).
    ``vectors`` are the passages' unit embeddings; ``sections`` the heading path each sits under."""
    n, t = len(texts), len(types)
    out = np.zeros((n, t, len(TYPE_FEATURES)), dtype=np.float32)
    if not n or not t:
        return out
    q = np.stack([w.query_vec for w in types])
    ex = np.stack([w.example_vec for w in types])
    out[:, :, 2] = vectors @ q.T
    out[:, :, 3] = vectors @ ex.T
    section_terms = {s: set(terms(s)) for s in set(sections)}
    words = [terms(text) for text in texts]
    unigrams = [set(ws) for ws in words]
    bigrams = [set(zip(ws, ws[1:])) for ws in words]
    for j, w in enumerate(types):
        q_set, q_pairs = set(w.query_terms), set(zip(w.query_terms, w.query_terms[1:]))
        for i in range(n):
            matches = len(q_set & unigrams[i]) + len(q_pairs & bigrams[i])
            out[i, j, 0] = 1.0 - math.exp(-matches / LEX_SCALE)
        if w.name_terms:
            for i, s in enumerate(sections):
                out[i, j, 1] = len(w.name_terms & section_terms[s]) / len(w.name_terms)
    return out
