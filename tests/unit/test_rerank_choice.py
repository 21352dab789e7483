"""The rerank's answer check and tool, pure: an answer is taken only as exactly K distinct numbers in
range, and the tool's schema is one the API takes, ``strict`` or not (``tests.anthropic_contract``)."""

from __future__ import annotations

import pytest

from extraction.agent.rerank import RerankError, check_choice, choose_tool, preview
from tests.anthropic_contract import tool_definition_errors


def test_a_right_answer_gives_0_based_indices_in_the_models_order():
    assert check_choice({"passages": [13, 1, 2, 3, 4]}, 20, 5) == [12, 0, 1, 2, 3]


@pytest.mark.parametrize(
    "passages",
    [
        [21, 1, 2, 3, 4],
        [0, 1, 2, 3, 4],
        [-1, 1, 2, 3, 4],
        [1, 1, 2, 3, 4],
        [1, 2, 3],
        [1, 2, 3, 4, 5, 6],
        ["1", 2, 3, 4, 5],
        [True, 2, 3, 4, 5],
        [1.0, 2, 3, 4, 5],
        None,
        "1,2,3,4,5",
    ],
)
def test_anything_else_is_refused(passages):
    with pytest.raises(RerankError):
        check_choice({"passages": passages}, 20, 5)
    with pytest.raises(RerankError):
        check_choice(passages, 20, 5)


@pytest.mark.parametrize("strict", [False, True])
def test_the_tool_is_one_the_api_takes(strict):
    tool = choose_tool(20, 5) | ({"strict": True} if strict else {})
    assert tool_definition_errors([tool]) == []


def test_a_preview_is_one_line_cut_at_a_word():
    text = "word " * 300
    out = preview(text, 50)
    assert "\n" not in out and out.endswith(" …") and len(out) <= 52 and " wor …" not in out
