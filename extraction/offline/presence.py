"""Is the clause there? A small logistic model for the offline engine's not_found decision. Pure.

The offline engine always has a best sentence; whether to report it or say not_found is a
yes/no decision on signals the engine and retrieval produce: the best and runner-up
sentence scores, the best sentence's lexical and embedding similarity, the retrieved
chunks' cosines, whether their section headings name the clause, how much more the best sentence
resembles this clause type than any other (``type_margin``), whether the answer is a value its
sentence names (``value_cue``: "effective as of <date>"; nearly every Effective Date that cuad-dev's
lawyers found absent has none), plus one bias per clause type (some clauses are in nearly every
contract, some in few); what the features add: docs/decisions.md,
extraction.offline.presence.FEATURES. ``fit`` learns the weights by L2-regularised logistic
regression (Newton steps, numpy) on one split of a labelled corpus; ``PresenceModel``
applies them. The decision threshold on the probability is chosen on the same split
by the ``evaluate --calibrate`` command and reported on the other split.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

FEATURES = (
    "best",
    "second",
    "margin",
    "lex",
    "emb",
    "top_cos",
    "mean_cos",
    "candidates",
    "section_match",
    "type_margin",
    "value_cue",
)


def type_margin(sentence_vec: Sequence[float], own: np.ndarray, others: np.ndarray) -> float:
    """How much more the best sentence resembles this clause type than any of its rivals in the
    catalog (``catalog.rivals``): its best cosine to this type's wordings (``own``: query, example)
    minus its best cosine to a rival's (``others``). A sentence that is really about assignment scores
    higher for Anti-Assignment than for Change Of Control. Vectors are unit length."""
    v = np.asarray(sentence_vec, dtype=float)
    if not len(own) or not len(others):
        return 0.0
    return float(np.max(own @ v) - np.max(others @ v))


def features(detail: Mapping, cosines: Sequence[float | None]) -> dict[str, float]:
    """Feature values of one (document, clause type) pair from the engine's detail and the
    retrieved chunks' query cosines."""
    cos = [c for c in cosines if c is not None]
    best = float(detail.get("best_score") or 0.0)
    second = float(detail.get("second_score") or 0.0)
    emb = detail.get("best_emb")
    return {
        "best": best,
        "second": second,
        "margin": best - second,
        "lex": float(detail.get("best_lex") or 0.0),
        "emb": float(emb) if emb is not None else best,
        "top_cos": max(cos) if cos else 0.0,
        "mean_cos": sum(cos) / len(cos) if cos else 0.0,
        "candidates": math.log1p(float(detail.get("candidates") or 0)),
        "section_match": float(detail.get("section_match") or 0.0),
        "type_margin": float(detail.get("type_margin") or 0.0),
        "value_cue": float(detail.get("value_cue") or 0.0),
    }


@dataclass
class PresenceModel:
    weights: dict[str, float]  # feature -> weight (on standardised features)
    means: dict[str, float]
    scales: dict[str, float]
    type_bias: dict[str, float] = field(default_factory=dict)
    bias: float = 0.0

    def probability(self, feats: Mapping[str, float], clause_type: str) -> float:
        z = self.bias + self.type_bias.get(clause_type, 0.0)
        for name, w in self.weights.items():
            z += w * (feats.get(name, 0.0) - self.means.get(name, 0.0)) / (self.scales.get(name) or 1.0)
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))

    def as_dict(self) -> dict:
        return {
            "weights": self.weights,
            "means": self.means,
            "scales": self.scales,
            "type_bias": self.type_bias,
            "bias": self.bias,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> PresenceModel:
        return cls(
            dict(data["weights"]),
            dict(data["means"]),
            dict(data["scales"]),
            dict(data.get("type_bias") or {}),
            float(data.get("bias", 0.0)),
        )


def fit(
    rows: Sequence[tuple[Mapping[str, float], str, bool]],
    *,
    l2: float = 1.0,
    type_l2: float = 1.0,
    iterations: int = 50,
    names: Sequence[str] = FEATURES,
) -> PresenceModel:
    """Fit on ``(features, clause_type, label)`` rows over the features ``names``. ``type_l2`` shrinks
    the per-type biases towards the shared bias, so a type seen a few times stays close to the average."""
    names = list(names)
    types = sorted({t for _, t, _ in rows})
    x = np.array([[f.get(n, 0.0) for n in names] for f, _, _ in rows], dtype=float)
    means, scales = x.mean(axis=0), x.std(axis=0)
    scales[scales == 0] = 1.0
    xs = (x - means) / scales
    onehot = np.zeros((len(rows), len(types)))
    index = {t: i for i, t in enumerate(types)}
    for r, (_, t, _) in enumerate(rows):
        onehot[r, index[t]] = 1.0
    design = np.hstack([np.ones((len(rows), 1)), xs, onehot])
    y = np.array([1.0 if label else 0.0 for _, _, label in rows])
    penalty = np.array([0.0] + [l2] * len(names) + [type_l2] * len(types))
    w = np.zeros(design.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ w, -40, 40)))
        grad = design.T @ (p - y) + penalty * w
        hess = (design * (p * (1 - p))[:, None]).T @ design + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return PresenceModel(
        {n: round(float(w[1 + i]), 6) for i, n in enumerate(names)},
        {n: round(float(means[i]), 6) for i, n in enumerate(names)},
        {n: round(float(scales[i]), 6) for i, n in enumerate(names)},
        {t: round(float(w[1 + len(names) + i]), 6) for i, t in enumerate(types)},
        round(float(w[0]), 6),
    )
