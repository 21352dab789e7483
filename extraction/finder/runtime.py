"""The clause finder at run time: the committed artifact, loaded once, applied to one document.

* ``rank_chunks``: a document's chunks ranked for a clause type by the chunk scorer, its best ones
  then by their best sentence, a chunk stating the type (``statements``) first: the list that leads
  retrieval's fusion (``extraction.retrieval``), so Claude's context improves as well as the offline
  engine's.
* ``assess``: for the offline engine, the probability that the type is in the document (the presence
  model over the scorers' best logits), the chunks the finder reads (its ``top_chunks`` best), and a
  probability per sentence of those chunks and of the chunks retrieval found. When the presence model
  says no and a sentence of the document states the type (``statements``, kept for the types with few
  examples), the type is found there, as sure as the statement proved on the training contracts.

A type the artifact was not fitted on (a seed type, an admin's own, a free question) gets nothing from
the finder: the offline engine reads it with its own scores and calibrated thresholds (why:
docs/decisions.md, extraction.finder.runtime.assess). ``CLAUSE_FINDER = False`` turns the finder off
everywhere (``evaluate --without-finder`` does, to report the figures without it);
``CLAUSE_FINDER_DIR`` names another artifact's folder.
"""

from __future__ import annotations

import functools
import json
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from scipy import sparse

from extraction.catalog import ClauseType
from extraction.docview import DocumentView
from extraction.finder import statements
from extraction.finder.features import Sentence, document_sentences, type_vectors
from extraction.finder.model import ClauseFinder, Reading, Scorer, lead_by_sentences, presence_row
from extraction.finder.rows import chunk_rows, chunk_vectors, sentence_rows, sentences_within, wording
from extraction.finder.words import Vocabulary
from extraction.offline.presence import PresenceModel

ARTIFACT_DIR = Path(__file__).resolve().parent / "artifact"
RERANK_POOL = 15  # the best chunks rank_chunks orders by their sentences (docs/decisions.md)
TABLES_KEPT = 8  # documents whose chunk rows stay in memory (a worker reads one document at a time)


@functools.lru_cache(maxsize=4)
def load_finder(folder: Path = ARTIFACT_DIR) -> ClauseFinder | None:
    """The artifact in ``folder``; None when there is none (the engines then use their own scores)."""
    info, weights = folder / "clause_finder.json", folder / "clause_finder.npz"
    if not info.is_file() or not weights.is_file():
        return None
    facts = json.loads(info.read_text())
    with np.load(weights) as arrays:
        sentence = Scorer.from_arrays(facts["types"], arrays, "sentence")
        chunk = Scorer.from_arrays(facts["types"], arrays, "chunk")
        vocabulary = Vocabulary.from_arrays(arrays, "words")
    return ClauseFinder(
        sentence,
        chunk,
        PresenceModel.from_dict(facts["presence"]),
        float(facts["threshold"]),
        int(facts["top_chunks"]),
        vocabulary,
        facts.get("options"),
        facts,
        facts.get("statements"),
    )


def finder_folder() -> Path:
    """Where the engines' finder is read from: ``CLAUSE_FINDER_DIR`` when set, else the committed artifact."""
    named = getattr(settings, "CLAUSE_FINDER_DIR", "")
    return Path(named) if named else ARTIFACT_DIR


def active_finder() -> ClauseFinder | None:
    """The finder the engines use (``finder_folder``); None when ``CLAUSE_FINDER`` is off."""
    if not getattr(settings, "CLAUSE_FINDER", True):
        return None
    folder = finder_folder()
    finder = load_finder(folder)
    if finder is None and folder != ARTIFACT_DIR:  # named on purpose: without it, figures of the wrong finder
        raise ImproperlyConfigured(f"CLAUSE_FINDER_DIR={folder} holds no clause_finder.json and .npz")
    return finder


@dataclass(frozen=True)
class _Table:
    chunk_x: np.ndarray
    chunk_vecs: np.ndarray
    chunk_words: sparse.csr_matrix
    vocabulary: Vocabulary  # the one ``chunk_words`` was read with
    sentences: tuple[Sentence, ...]
    stated: dict[str, int | None] = field(default_factory=dict)  # type -> its first stated sentence


_TABLES: OrderedDict[tuple, _Table] = OrderedDict()


def _table(view: DocumentView, reading: Reading) -> _Table:
    key = (view.id, len(view.chunks), view.chunks[-1].chunk_id if view.chunks else "")
    if key in _TABLES and _TABLES[key].vocabulary is reading.vocabulary:
        _TABLES.move_to_end(key)
        return _TABLES[key]
    vecs = chunk_vectors(view.id, [c.chunk_id for c in view.chunks])
    table = _Table(
        chunk_rows(view, vecs),
        vecs,
        reading.words([c.text for c in view.chunks]),
        reading.vocabulary,
        tuple(document_sentences(view.chunks, view.furniture)),
    )
    _TABLES[key] = table
    while len(_TABLES) > TABLES_KEPT:
        _TABLES.popitem(last=False)
    return table


def chunk_logits(view: DocumentView, clause: ClauseType, reading: Reading) -> np.ndarray:
    """The chunk scorer's logit of every chunk of ``view`` for ``clause`` (chunk order)."""
    if not view.chunks:
        return np.zeros(0, dtype=np.float32)
    table = _table(view, reading)
    chunks = view.chunks
    h = type_vectors(
        [c.text for c in chunks], [c.section for c in chunks], table.chunk_vecs, [wording(clause)]
    )
    return reading.chunk.logits(table.chunk_x, h, [reading.column], table.chunk_words)[:, 0]


def rank_chunks(view: DocumentView, clause: ClauseType, finder: ClauseFinder | None = None) -> list[str]:
    """Chunk ids of ``view`` best first for ``clause``; [] when the finder does not know the type. The
    chunk scorer orders every chunk, then its ``RERANK_POOL`` best go by their best sentence's logit
    (``model.lead_by_sentences``); a chunk whose sentence states the type (``stated_sentence``) leads."""
    finder = finder or active_finder()
    reading = finder.reading(clause.name) if finder is not None else None
    if reading is None or not view.chunks:
        return []
    logits = chunk_logits(view, clause, reading)
    order = [int(i) for i in np.argsort(-logits, kind="stable")]
    scored = sentence_logits(view, clause, reading, order[:RERANK_POOL])
    spans = [(c.char_start, c.char_end) for c in view.chunks]
    ranked = lead_by_sentences(order, spans, [(s.start, s.end, z) for s, z in scored], RERANK_POOL)
    said = stated_sentence(view, reading)
    if said is not None:  # the chunk whose sentence states the type leads
        ranked = [said.chunk] + [i for i in ranked if i != said.chunk]
    return [view.chunks[i].chunk_id for i in ranked]


def stated_sentence(view: DocumentView, reading: Reading) -> Sentence | None:
    """The first sentence of ``view`` that states the type (``statements``), when the artifact kept a
    statement for it; else None."""
    if reading.stated_confidence is None:
        return None
    table = _table(view, reading)
    if reading.clause_type not in table.stated:  # read once a document: a question asks twice
        table.stated[reading.clause_type] = statements.first_stated(
            reading.clause_type, [s.text for s in table.sentences]
        )
    k = table.stated[reading.clause_type]
    return None if k is None else table.sentences[k]


@dataclass(frozen=True)
class Assessment:
    probability: float  # that the clause is in the document
    threshold: float  # the finder's decision threshold on it
    top_chunks: tuple[str, ...]  # chunk ids the finder reads, best first
    sentences: dict[tuple[int, int], float]  # (start, end) -> probability the sentence is the clause
    row: dict[str, float]  # the presence model's features
    stated: tuple[int, int] | None = None  # a sentence stating the type, when the presence model says no
    stated_confidence: float = 0.0  # how sure that statement makes the type present

    @property
    def found(self) -> bool:
        return self.probability >= self.threshold or self.stated is not None

    @property
    def confidence(self) -> float:
        """How sure the finder is of its decision: of presence when found, of absence otherwise."""
        if self.stated is not None:
            return self.stated_confidence
        return self.probability if self.found else 1.0 - self.probability


def assess(
    view: DocumentView, clause: ClauseType, also: Iterable[str] = (), finder: ClauseFinder | None = None
) -> Assessment | None:
    """The finder's view of ``clause`` in ``view``; ``also``: more chunk ids whose sentences it scores
    (what retrieval found). None when the finder does not know the type (or the document has no chunk)."""
    finder = finder or active_finder()
    reading = finder.reading(clause.name) if finder is not None else None
    if finder is None or reading is None or not view.chunks:
        return None
    logits = chunk_logits(view, clause, reading)
    order = np.argsort(-logits, kind="stable")
    top = [int(i) for i in order[: finder.top_chunks]]
    index = {c.chunk_id: i for i, c in enumerate(view.chunks)}
    wanted = top + [index[cid] for cid in also if cid in index and index[cid] not in top]
    scored = sentence_logits(view, clause, reading, wanted)
    own = [(view.chunks[i].char_start, view.chunks[i].char_end) for i in top]
    read_here = set(sentences_within([s for s, _ in scored], own))  # inside the finder's own top chunks
    probs = {(s.start, s.end): 1.0 / (1.0 + float(np.exp(-np.clip(z, -30, 30)))) for s, z in scored}
    row = presence_row([z for k, (_, z) in enumerate(scored) if k in read_here], logits)
    probability = reading.presence.probability(row, reading.clause_type)
    top_ids = tuple(view.chunks[i].chunk_id for i in top)
    said = stated_sentence(view, reading) if probability < reading.threshold else None
    if said is None:
        return Assessment(probability, reading.threshold, top_ids, probs, row)
    home = view.chunks[said.chunk].chunk_id  # the chunk of the sentence the answer is built on, read first
    return Assessment(
        probability,
        reading.threshold,
        (home,) + tuple(c for c in top_ids if c != home),
        {**probs, (said.start, said.end): 1.0},
        row,
        (said.start, said.end),
        reading.stated_confidence or 0.0,
    )


def sentence_logits(
    view: DocumentView, clause: ClauseType, reading: Reading, chunks: Sequence[int]
) -> list[tuple[Sentence, float]]:
    """The sentence scorer's logit of each sentence lying whole inside one of ``chunks`` (indices into
    ``view.chunks``), in document order. The embeddings come through the ingest cache, so a sentence
    scored for one type is not embedded again for the next."""
    table = _table(view, reading)
    spans = [(view.chunks[i].char_start, view.chunks[i].char_end) for i in chunks]
    picked = [table.sentences[i] for i in sentences_within(table.sentences, spans)]
    if not picked:
        return []
    vecs, x = sentence_rows(view, picked, table.chunk_vecs)
    sections = [view.chunks[s.chunk].section for s in picked]
    h = type_vectors([s.text for s in picked], sections, vecs, [wording(clause)])
    z = reading.sentence.logits(x, h, [reading.column], reading.words([s.text for s in picked]))[:, 0]
    return list(zip(picked, z.tolist()))
