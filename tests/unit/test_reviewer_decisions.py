"""The decisions core: derived state, validation and the stale-decision check (no database)."""

from datetime import UTC, datetime
from types import SimpleNamespace as NS

import pytest

from extraction.evaluation.stratify import answer_is_absent
from reviewer.decisions import (
    InvalidDecision,
    StaleDecision,
    UnsavedEdit,
    check_fresh,
    derive_state,
    validate,
)

WHEN = datetime(2026, 3, 1, 10, 30, tzinfo=UTC)


def review(id, decision, corrected="", who="bob"):
    return NS(
        id=id,
        decision=decision,
        corrected_text=corrected,
        created_at=WHEN,
        reviewer=NS(username=who, get_full_name=lambda: ""),
    )


def test_no_review_is_pending_with_the_engine_text():
    state = derive_state("engine text", [])
    assert (state.decision, state.text, state.label, state.latest_review_id) == (
        "pending",
        "engine text",
        "not reviewed",
        0,
    )


def test_latest_review_decides_and_the_latest_correction_is_the_text():
    reviews = [review(3, "accept"), review(2, "correct", "fixed twice"), review(1, "correct", "fixed once")]
    state = derive_state("engine", reviews)
    assert (state.decision, state.text, state.reviewer, state.latest_review_id) == (
        "accept",
        "fixed twice",
        "bob",
        3,
    )
    assert derive_state("engine", [review(1, "reject")]).text == "engine"


@pytest.mark.parametrize(
    "args, message",
    [
        (("maybe", "", "", "x"), "Choose accept, reject, correct or not in this contract."),
        (("reject", "", "  ", "x"), "Give a reason for rejecting"),
        (("correct", "", "why", "x"), "Type the corrected clause text."),
        (("correct", " x ", "", "x"), "same as the current text"),
    ],
)
def test_invalid_decisions_say_what_to_fix(args, message):
    with pytest.raises(InvalidDecision, match=message):
        validate(*args)


def test_valid_decisions_are_normalised():
    assert validate(" Accept ", " x ", " ok ", "x") == ("accept", "", "ok")  # the text box left as it was
    assert validate("accept", "", "", "x") == ("accept", "", "")  # no text box posted
    assert validate("correct", " new text ", "", "old") == ("correct", "new text", "")


def test_not_in_this_contract_is_a_correction_to_not_found():
    assert validate("absent", " engine text ", "", "engine text") == ("correct", "not_found", "")
    assert validate("absent", "", "on no page", "engine text") == ("correct", "not_found", "on no page")
    with pytest.raises(UnsavedEdit):  # an edit in the text box is never thrown away
        validate("absent", "engine text, edited", "", "engine text")
    with pytest.raises(InvalidDecision, match="already says"):
        validate("absent", "", "", "", absent_now=True)


def test_an_answer_stands_absent_when_the_engine_or_a_correction_says_not_found():
    assert answer_is_absent("not_found", "")
    assert answer_is_absent("found", "not_found")  # corrected to not found
    assert not answer_is_absent("found", "Governed by the laws of Delaware.")
    assert not answer_is_absent("not_found", "9.1 Non-Compete ...")  # corrected to a text


def test_fresh_when_nothing_changed():
    check_fresh(0, 1, None, 1, "accept")
    check_fresh(5, 2, review(5, "accept"), 2, "reject")


def test_stale_when_someone_decided_after_you_opened_it():
    with pytest.raises(StaleDecision) as info:
        check_fresh(0, 1, review(9, "reject", who="bob"), 1, "accept")
    assert "Not saved: bob recorded “rejected”" in str(info.value)
    assert "Your “accept” was not recorded" in str(info.value)
    assert info.value.latest.id == 9


def test_stale_when_the_extraction_version_moved():
    with pytest.raises(StaleDecision, match="new version"):
        check_fresh(5, 1, review(5, "correct"), 2, "accept")


@pytest.mark.parametrize("decision", ["accept", "reject"])
def test_accept_or_reject_with_an_edited_text_is_refused_not_the_edit_dropped(decision):
    with pytest.raises(
        InvalidDecision, match="You edited the text: save it as a correction, or discard the edit"
    ):
        validate(decision, "the engine text, amended", "why", "the engine text")


def test_line_endings_from_a_browser_are_normalised_on_both_sides():
    # browsers submit a textarea with CRLF; the stored text may have either
    with pytest.raises(InvalidDecision, match="same as the current text"):
        validate("correct", "12.1 Cap.\r\nExcept for\r\n", "", "12.1 Cap.\nExcept for")
    with pytest.raises(InvalidDecision, match="same as the current text"):
        validate("correct", "12.1 Cap.\nExcept for", "", "12.1 Cap.\r\nExcept for")
    assert validate("accept", "12.1 Cap.\r\nExcept for", "", "12.1 Cap.\nExcept for") == ("accept", "", "")
    assert validate("correct", "12.1 Cap.\r\nSave for", "", "12.1 Cap.\nExcept for") == (
        "correct",
        "12.1 Cap.\nSave for",
        "",
    )


def test_a_box_left_as_it_opened_on_a_closest_sentence_is_no_edit():
    near = "Either party may end this Agreement on 90 days' notice."
    assert validate("accept", near, "", "", box_text=near) == ("accept", "", "")
    assert validate("reject", f"{near}\r\n", "it is there", "", box_text=near) == (
        "reject",
        "",
        "it is there",
    )
    with pytest.raises(UnsavedEdit):
        validate("accept", near + " (edited)", "", "", box_text=near)
    # saved as it stands, the closest sentence is the reviewer's correction
    assert validate("correct", near, "", "", box_text=near) == ("correct", near, "")
