"""A document as the clause finder reads it: its chunks and sentences as feature rows.

Used the same way by training (every document of a labelled corpus) and at run time (one document,
one type): the rows are built here once, so what the weights were fitted on is what they score.
Chunk vectors come from the index (``ingest.Chunk.embedding``); sentence vectors through the ingest
embedding cache, so a sentence the retrieval already embedded is not embedded again.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from extraction.catalog import ClauseType
from extraction.docview import DocumentView
from extraction.finder.features import (
    Sentence,
    TypeWording,
    cue_vector,
    document_sentences,
    type_vectors,
)
from extraction.lexical import terms
from extraction.offline.reader import unit_rows
from ingest.embeddings import text_vectors as embed_texts
from ingest.models import Chunk


@dataclass(frozen=True)
class DocumentRows:
    """One document's passages as finder rows (``x``: embeddings then cues, unscaled)."""

    view: DocumentView
    chunk_vecs: np.ndarray  # (chunks, 384), unit length
    chunk_x: np.ndarray  # (chunks, 384 + cues)
    sentences: tuple[Sentence, ...]
    sentence_vecs: np.ndarray  # (sentences, 384), unit length
    sentence_x: np.ndarray  # (sentences, 384 + 384 + cues): the sentence, its chunk, its cues

    def chunk_type_rows(self, wordings: Sequence[TypeWording]) -> np.ndarray:
        chunks = self.view.chunks
        return type_vectors([c.text for c in chunks], [c.section for c in chunks], self.chunk_vecs, wordings)

    def sentence_type_rows(self, wordings: Sequence[TypeWording]) -> np.ndarray:
        sections = [self.view.chunks[s.chunk].section for s in self.sentences]
        return type_vectors([s.text for s in self.sentences], sections, self.sentence_vecs, wordings)


def chunk_vectors(document_pk: int, chunk_ids: Sequence[str]) -> np.ndarray:
    """Unit embeddings of a document's chunks in ``chunk_ids`` order (zero rows for a chunk without one)."""
    stored = dict(Chunk.objects.filter(document_id=document_pk).values_list("chunk_id", "embedding"))
    rows = [stored.get(cid) for cid in chunk_ids]
    dims = next((len(v) for v in rows if v is not None), 384)
    return unit_rows([v if v is not None else np.zeros(dims) for v in rows]).astype(np.float32)


def chunk_rows(view: DocumentView, chunk_vecs: np.ndarray) -> np.ndarray:
    """The chunk scorer's shared rows of ``view``'s chunks: their embeddings, then their cues."""
    chars = len(view.text)
    cues = np.array(
        [
            cue_vector(c.text, start=c.char_start, doc_chars=chars, opening=c.ordinal == 0)
            for c in view.chunks
        ],
        dtype=np.float32,
    ).reshape(len(view.chunks), -1)
    return np.hstack([chunk_vecs, cues]) if len(view.chunks) else np.zeros((0, 0), dtype=np.float32)


def sentence_rows(
    view: DocumentView, sentences: Sequence[Sentence], chunk_vecs: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(unit embeddings, the sentence scorer's shared rows) of ``sentences``: a row is the sentence's
    embedding, its chunk's, then its cues. The embeddings come through the ingest cache."""
    vecs = unit_rows(embed_texts([s.text for s in sentences])).astype(np.float32)
    chars = len(view.text)
    cues = np.array(
        [
            cue_vector(s.text, start=s.start, doc_chars=chars, opening=view.chunks[s.chunk].ordinal == 0)
            for s in sentences
        ],
        dtype=np.float32,
    )
    return vecs, np.hstack([vecs, chunk_vecs[[s.chunk for s in sentences]], cues])


def sentences_within(sentences: Sequence[Sentence], spans: Sequence[tuple[int, int]]) -> list[int]:
    """Indices of the ``sentences`` that lie whole inside one of ``spans`` (a chunk's start and end)."""
    return [i for i, s in enumerate(sentences) if any(a <= s.start and s.end <= b for a, b in spans)]


def document_rows(view: DocumentView) -> DocumentRows:
    """The finder's rows of one document, every sentence embedded (training reads them all)."""
    chunk_vecs = chunk_vectors(view.id, [c.chunk_id for c in view.chunks])
    found = tuple(document_sentences(view.chunks, view.furniture))
    if found:
        sent_vecs, sent_x = sentence_rows(view, found, chunk_vecs)
    else:
        sent_vecs = np.zeros((0, chunk_vecs.shape[1] if len(view.chunks) else 384), dtype=np.float32)
        sent_x = np.zeros((0, 0), dtype=np.float32)
    return DocumentRows(view, chunk_vecs, chunk_rows(view, chunk_vecs), found, sent_vecs, sent_x)


def wording(clause: ClauseType) -> TypeWording:
    """How the finder compares passages with ``clause`` (a catalog type or an admin's own)."""
    return _wording(clause.name, clause.query, (clause.example or "").strip())


@functools.lru_cache(maxsize=256)
def _wording(name: str, query: str, example: str) -> TypeWording:
    texts = [f"{name}: {query}"] + ([example] if example else [])
    vecs = unit_rows(embed_texts(texts)).astype(np.float32)
    example_vec = vecs[1] if example else np.zeros(vecs.shape[1], dtype=np.float32)
    return TypeWording(name, tuple(terms(f"{name} {query}")), frozenset(terms(name)), vecs[0], example_vec)
