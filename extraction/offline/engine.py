"""The offline engine behind the engine interface: no network.

It picks verbatim sentence(s) from the retrieved chunks (``offline_engine``) and
decides found / not_found with what ``offline/calibration.json`` holds (written by
``evaluate --calibrate``, fitted on one half of cuad-dev):

- ``mode: "presence"``: a logistic presence model (``presence``) over the engine's
  and retrieval's signals, with a probability threshold;
- otherwise a threshold on the best sentence score (``threshold``, per kind if given).

The presence model decides for the built-in types it was fitted on (``catalog.is_built_in``).
Others go by the score threshold: the model's signals assume the catalog's wordings, example
clauses and per-type biases, and they measure a passage against the built-in types as rivals.

* A free question (``catalog.is_question``) is answered with the best passage whenever its score
  reaches ``QUESTION_THRESHOLD`` (a question of a few words scores lower than a catalog wording,
  and the presence model is not fitted on questions). The threshold balances hit rate against
  silent-source on questions written as users would (docs/decisions.md,
  extraction.offline.engine.QUESTION_THRESHOLD).
* An admin's own type takes the calibrated score threshold: through the presence model a
  restated built-in type is out-voted by its built-in twin (docs/decisions.md,
  extraction.offline.engine.threshold_for).

A reviewer sees and decides every answer.

Its answer goes through the same citation verifier as Claude's.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from extraction import catalog
from extraction.catalog import ClauseType
from extraction.closest import locate
from extraction.docview import DocumentView, ScoredChunk
from extraction.finder.model import ClauseFinder
from extraction.finder.runtime import Assessment, active_finder, assess
from extraction.offline.presence import PresenceModel, features, type_margin
from extraction.offline.reader import (
    DEFAULT_THRESHOLD,
    NOT_FOUND,
    Candidate,
    extract_offline,
    section_match,
    unit_rows,
)
from extraction.outcome import ClauseOutcome, outcome_from_verification
from extraction.retrieval import clause_query, embed_texts
from extraction.usage import Usage
from extraction.verify import verify_extraction

# share of a sentence's score that is the clause finder's probability (docs/decisions.md,
# extraction.offline.engine.LEARNED_WEIGHT)
LEARNED_WEIGHT = 0.5
QUESTION_THRESHOLD = 0.45  # a free question's best-passage score to be answered (see the module docstring)
CALIBRATION_FILE = Path(__file__).resolve().parent / "calibration.json"


def load_calibration(path: Path = CALIBRATION_FILE) -> dict:
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return {"threshold": DEFAULT_THRESHOLD}


def threshold_for(calibration: dict, clause: ClauseType) -> float:
    """Per-kind score threshold when calibrated, else the global one."""
    per_kind = calibration.get("per_kind") or {}
    return float(per_kind.get(clause.kind, calibration.get("threshold", DEFAULT_THRESHOLD)))


def _detail(result, threshold: float) -> dict:
    """What the engine saw: the best and runner-up sentence scores and the best one's signals."""
    cands = result.candidates
    best = cands[0] if cands else None
    return {
        "best_score": round(result.best_score, 4),
        "threshold": threshold,
        "second_score": round(cands[1].score, 4) if len(cands) > 1 else 0.0,
        "best_lex": round(best.lexical, 4) if best else 0.0,
        "best_emb": round(best.embedding, 4) if best and best.embedding is not None else None,
        "candidates": len(cands),
        "value_cue": float(result.value_cued),
    }


class OfflineSession:
    def __init__(self, engine: OfflineEngine, document: DocumentView):
        self.engine = engine
        self.document = document
        self.usage = Usage()

    def _pick(
        self, clause: ClauseType, clause_id: str, retrieved: Sequence[ScoredChunk], threshold: float, **more
    ):
        kwargs = dict(
            pages=self.document.pages,
            embed=self.engine.embed,
            threshold=threshold,
            clause_id=clause_id,
            furniture=self.document.furniture,
            best_first=catalog.is_question(clause),
            **self.engine.options,
            **more,
        )
        try:
            return extract_offline(clause, retrieved, **kwargs)
        except ValueError:  # a widened window crossed a gap between retrieved chunks: take sentences alone
            return extract_offline(clause, retrieved, **{**kwargs, "max_window": 1})

    def extract(self, clause: ClauseType, clause_id: str, retrieved: Sequence[ScoredChunk]) -> ClauseOutcome:
        finder = self.engine.finder
        seen = [sc.chunk.chunk_id for sc in retrieved]
        assessment = assess(self.document, clause, seen, finder) if finder is not None else None
        if assessment is not None:
            return self._extract_found_by_finder(clause, clause_id, retrieved, assessment)
        model = self.engine.presence if catalog.is_built_in(clause) else None
        threshold = 0.0 if model is not None else self.engine.threshold(clause)
        result = self._pick(clause, clause_id, retrieved, threshold)
        detail = _detail(result, threshold)
        detail["section_match"] = round(section_match(clause, retrieved, result.candidates), 4)
        tool_input = result.tool_input
        if result.candidates and self.engine.embed is not None:  # a signal for calibration too
            detail["type_margin"] = round(self.engine.type_margin(clause, result.candidates[0].text), 4)
        if model is not None:
            feats = features(detail, [getattr(r, "cosine", None) for r in retrieved])
            p = model.probability(feats, clause.name)
            detail.update(
                presence=round(p, 4),
                presence_threshold=self.engine.presence_threshold,
                features={k: round(v, 4) for k, v in feats.items()},
            )
            if p < self.engine.presence_threshold:
                tool_input = {**tool_input, "clause_text": NOT_FOUND, "citations": []}
        return self._verified(clause, clause_id, tool_input, result.offsets, detail, result.candidates)

    def _extract_found_by_finder(
        self, clause: ClauseType, clause_id: str, retrieved: Sequence[ScoredChunk], assessment: Assessment
    ) -> ClauseOutcome:
        """The clause finder decides presence; the sentences it and retrieval found are read with its
        probabilities blended into the sentence scores (``LEARNED_WEIGHT``)."""
        doc = self.document
        seen = {sc.chunk.chunk_id for sc in retrieved}
        reading = list(retrieved) + [
            ScoredChunk(doc.by_id[c]) for c in assessment.top_chunks if c not in seen
        ]
        result = self._pick(
            clause, clause_id, reading, 0.0, learned=assessment.sentences, learned_weight=LEARNED_WEIGHT
        )
        detail = _detail(result, 0.0)
        p = assessment.probability
        detail.update(
            presence=round(p, 4),
            presence_threshold=assessment.threshold,
            confidence=round(assessment.confidence, 4),
            finder={k: round(v, 4) for k, v in assessment.row.items()},
        )
        if assessment.stated is not None:
            detail["stated"] = list(assessment.stated)
        tool_input = result.tool_input
        if not assessment.found:
            tool_input = {**tool_input, "clause_text": NOT_FOUND, "citations": []}
        return self._verified(clause, clause_id, tool_input, result.offsets, detail, result.candidates)

    def _verified(
        self,
        clause: ClauseType,
        clause_id: str,
        tool_input: dict,
        offsets: Sequence[int],
        detail: dict,
        candidates: Sequence[Candidate] = (),
    ) -> ClauseOutcome:
        """The answer through the same citation verifier as Claude's. A not_found keeps the sentence the
        engine judged best (``closest``), verified the same way: a reviewer who doubts the not_found reads
        the nearest miss first."""
        doc = self.document
        if tool_input["clause_text"] == NOT_FOUND and candidates:
            best = candidates[0]
            closest = locate(doc, best.chunk_id, best.start, best.text)
            if closest is not None:
                detail = {**detail, "closest": closest}
        verified = verify_extraction(
            tool_input["citations"],
            doc.by_id,
            doc.pages,
            tool_input["clause_text"],
            document_text=doc.text,
            offsets=offsets,
            furniture=doc.furniture,
        )
        return outcome_from_verification(clause, clause_id, tool_input, verified, turns=0, detail=detail)

    def snapshot(self) -> dict:
        return {"history": [], "position": {}}


class OfflineEngine:
    name = "offline"

    def __init__(
        self,
        *,
        embed: Callable | None = None,
        calibration: dict | None = None,
        use_embeddings=True,
        finder: ClauseFinder | None | bool = True,
    ):
        # the clause finder (``extraction.finder``): True takes the committed artifact unless
        # settings.CLAUSE_FINDER is off; None or False reads without it
        self.finder = active_finder() if finder is True else (finder or None)
        self.calibration = calibration if calibration is not None else load_calibration()
        self.options = dict(self.calibration.get("options") or {})  # extract_offline keyword arguments
        presence = self.calibration.get("presence") if self.calibration.get("mode") == "presence" else None
        self.presence = PresenceModel.from_dict(presence) if presence else None
        self.presence_threshold = float(self.calibration.get("presence_threshold", 0.5))
        self._embed = embed
        self.use_embeddings = use_embeddings
        self.model = f"offline-v1@{self.calibration.get('version', 'default')}"

    @property
    def embed(self):
        if self._embed is None and self.use_embeddings:
            self._embed = embed_texts
        return self._embed

    def threshold(self, clause: ClauseType) -> float:
        return QUESTION_THRESHOLD if catalog.is_question(clause) else threshold_for(self.calibration, clause)

    @functools.cached_property
    def _catalog_vectors(self) -> tuple[list[str], np.ndarray]:
        """Each built-in catalog type's wordings (query, example) as unit vectors, with their type names."""
        owners, texts = [], []
        for c in catalog.CATALOG:
            for text in (clause_query(c), c.example):
                owners.append(c.name)
                texts.append(text)
        return owners, unit_rows(self.embed(texts))

    def type_margin(self, clause: ClauseType, sentence: str) -> float:
        """``presence.type_margin`` of ``sentence`` for ``clause`` against its rivals
        (``catalog.rivals``: the other types of its own taxonomy; docs/decisions.md,
        extraction.offline.engine.OfflineEngine.type_margin)."""
        owners, vectors = self._catalog_vectors
        own_texts = [clause_query(clause)] + ([clause.example] if clause.example.strip() else [])
        own_and_sentence = unit_rows(self.embed(own_texts + [sentence]))
        rival_names = {c.name for c in catalog.rivals(clause)}
        rows = [i for i, name in enumerate(owners) if name in rival_names]
        return type_margin(own_and_sentence[-1], own_and_sentence[:-1], vectors[rows])

    def open_session(self, document, *, facts=None, types=(), search=None, snapshot=None, on_checkpoint=None):
        return OfflineSession(self, document)
