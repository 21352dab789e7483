"""The offline engine's presence model (pure logistic regression)."""

from __future__ import annotations

import random

from extraction.offline.presence import FEATURES, PresenceModel, features, fit


def _row(best, present, t="A"):
    f = {name: 0.0 for name in FEATURES}
    f.update(best=best, emb=best, margin=best / 4)
    return f, t, present


def test_features_from_engine_detail_and_cosines():
    f = features(
        {"best_score": 0.6, "second_score": 0.5, "best_lex": 0.3, "best_emb": 0.7, "candidates": 9},
        [0.4, None, 0.2],
    )
    assert f["margin"] == 0.6 - 0.5 and f["top_cos"] == 0.4 and abs(f["mean_cos"] - 0.3) < 1e-9
    assert set(f) == set(FEATURES)


def test_fit_learns_that_higher_scores_mean_present_and_type_priors():
    rnd = random.Random(7)
    rows = [_row(rnd.uniform(0.5, 1.0), True) for _ in range(60)] + [
        _row(rnd.uniform(0.0, 0.55), False) for _ in range(60)
    ]
    rows += [_row(0.5, True, "Common")] * 30 + [_row(0.5, False, "Rare")] * 30
    model = fit(rows)
    assert model.weights["best"] > 0
    assert (
        model.probability(_row(0.9, True)[0], "A") > 0.8 > 0.2 > model.probability(_row(0.1, False)[0], "A")
    )
    mid = _row(0.5, True)[0]
    assert model.probability(mid, "Common") > model.probability(mid, "Rare")
    again = PresenceModel.from_dict(model.as_dict())
    assert again.probability(mid, "Common") == model.probability(mid, "Common")
    assert 0 < model.probability(mid, "never seen type") < 1


def test_type_margin_says_which_type_a_sentence_resembles_most():
    import numpy as np

    from extraction.offline.presence import type_margin

    own = np.array([[1.0, 0.0, 0.0], [0.8, 0.6, 0.0]])  # this type's query and example
    others = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # the other types' wordings
    assert type_margin([0.96, 0.28, 0.0], own, others) > 0.5  # about this type
    assert type_margin([0.0, 0.6, 0.8], own, others) < 0  # about another type
    assert type_margin([1.0, 0.0, 0.0], own, np.zeros((0, 3))) == 0.0
    assert features({"type_margin": 0.25}, [])["type_margin"] == 0.25
