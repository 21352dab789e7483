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

    def sentence_type_rows(
        self, wordings: Sequence[TypeWording], which: Sequence[int] | None = None
    ) -> np.ndarray:
        idx = range(len(self.sentences)) if which is None else which
        sections = [self.view.chunks[self.sentences[i].chunk].section for i in idx]
        return type_vectors(
            [self.sentences[i].text for i in idx], sections, self.sentence_vecs[list(idx)], wordings
        )


def chunk_vectors(document_pk: int, chunk_ids: Sequence[str]) -> np.ndarray:
    """Unit embeddings of a document's chunks in ``chunk_ids`` order (zero rows for a chunk without one)."""
    stored = dict(Chunk.objects.filter(document_id=document_pk).values_list("chunk_id", "embedding"))
    rows = [stored.get(cid) for cid in chunk_ids]
    dims = next((len(v) for v in rows if v is not None), 384)
    return unit_rows([v if v is not None else np.zeros(dims) for v in rows]).astype(np.float32)


def document_rows(view: DocumentView, *, sentences: bool = True) -> DocumentRows:
    """The finder's rows of one document (``sentences=False``: its chunks only, no sentence embedded)."""
    chunks = view.chunks
    chars = len(view.text)
    chunk_vecs = chunk_vectors(view.id, [c.chunk_id for c in chunks])
    chunk_cues = np.array(
        [cue_vector(c.text, start=c.char_start, doc_chars=chars, opening=c.ordinal == 0) for c in chunks],
        dtype=np.float32,
    ).reshape(len(chunks), -1)
    chunk_x = np.hstack([chunk_vecs, chunk_cues]) if len(chunks) else np.zeros((0, 0), dtype=np.float32)
    found = tuple(document_sentences(chunks, view.furniture)) if sentences else ()
    if found:
        sent_vecs = unit_rows(embed_texts([s.text for s in found])).astype(np.float32)
        cues = np.array(
            [
                cue_vector(s.text, start=s.start, doc_chars=chars, opening=chunks[s.chunk].ordinal == 0)
                for s in found
            ],
            dtype=np.float32,
        )
        sent_x = np.hstack([sent_vecs, chunk_vecs[[s.chunk for s in found]], cues])
    else:
        sent_vecs = np.zeros((0, chunk_vecs.shape[1] if len(chunks) else 384), dtype=np.float32)
        sent_x = np.zeros((0, 0), dtype=np.float32)
    return DocumentRows(view, chunk_vecs, chunk_x, found, sent_vecs, sent_x)


def wording(clause: ClauseType) -> TypeWording:
    """How the finder compares passages with ``clause`` (a catalog type or an admin's own)."""
    return _wording(clause.name, clause.query, (clause.example or "").strip())


@functools.lru_cache(maxsize=256)
def _wording(name: str, query: str, example: str) -> TypeWording:
    texts = [f"{name}: {query}"] + ([example] if example else [])
    vecs = unit_rows(embed_texts(texts)).astype(np.float32)
    example_vec = vecs[1] if example else np.zeros(vecs.shape[1], dtype=np.float32)
    return TypeWording(name, tuple(terms(f"{name} {query}")), frozenset(terms(name)), vecs[0], example_vec)
