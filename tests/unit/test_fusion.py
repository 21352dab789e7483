"""Reciprocal rank fusion of the retrieval lists: ranks add up, heavier lists count more."""

import pytest

from extraction.retrieval import DEFAULT_STRATEGY
from ingest.fusion import rrf


def test_a_chunk_high_in_several_lists_beats_one_first_in_a_single_list():
    fused = rrf([[1, 2, 3], [2, 3, 1], [3, 2, 1]], rrf_k=60)
    assert [pk for pk, _ in fused] == [2, 3, 1]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62 + 1 / 62)


def test_weights_decide_between_lists_that_disagree():
    vector, lexical = [1, 2], [2, 1]
    assert [pk for pk, _ in rrf([vector, lexical])][0] == 1  # a tie: the first seen wins
    assert [pk for pk, _ in rrf([vector, lexical], weights=[1.0, DEFAULT_STRATEGY.lexical_weight])][0] == 2
    weighted, doubled = rrf([vector, lexical], weights=[1.0, 2.0]), rrf([vector, lexical, lexical])
    assert [pk for pk, _ in weighted] == [pk for pk, _ in doubled]  # weight 2 = the list entered twice
    assert [score for _, score in weighted] == pytest.approx([score for _, score in doubled])
