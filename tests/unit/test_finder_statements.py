"""Statements (``extraction.finder.statements``): a sentence that says a rarely labelled type is there
makes it found, when the training contracts bear the wording out; a wording turned round by a negation
before it says nothing."""

from __future__ import annotations

from extraction.finder.statements import (
    FEW_EXAMPLES,
    MIN_MATCHED,
    confidence,
    first_stated,
    select,
    states,
)

TPB = "Third Party Beneficiary"
GRANTS = (
    "It is expressly agreed by the Parties that the Lenders shall be third party beneficiaries of "
    "Section 8.13."
)
DEEMED = "The Agent shall be deemed to be a third-party\nbeneficiary of this Agreement."
DENIES = (
    "It is the intention of the Parties that no third Person shall be deemed a third-party beneficiary "
    "of this Agreement."
)
BOILERPLATE = "There are no third party beneficiaries of this Agreement."


def test_a_sentence_naming_a_third_party_beneficiary_states_the_type():
    assert states(TPB, GRANTS)
    assert states(TPB, DEEMED)  # a line break inside the wording is a space


def test_a_negation_before_the_wording_turns_it_round():
    assert not states(TPB, DENIES)
    assert not states(TPB, BOILERPLATE)
    assert first_stated(TPB, [BOILERPLATE, DENIES, "Notices shall be in writing.", GRANTS]) == 3
    assert first_stated(TPB, [BOILERPLATE, DENIES]) is None


def test_a_type_without_a_statement_is_never_stated():
    assert not states("Governing Law", "This Agreement is governed by the laws of New York.")
    assert not states("A type an admin added", GRANTS)


def test_confidence_is_the_share_right_smoothed_by_one_of_each():
    assert confidence(5, 5) == 6 / 7
    assert confidence(0, 0) == 0.5
    assert confidence(3, 6) == 0.5


def _contracts(stated_present: int, stated_absent: int, others_present: int = 0, total: int = 60):
    """Contracts labelled for TPB: ``stated_present`` state it and hold it, ``stated_absent`` state it
    and do not, ``others_present`` hold it without the wording; the rest neither."""
    out = []
    for i in range(total):
        if i < stated_present:
            out.append(([GRANTS], {TPB: True}))
        elif i < stated_present + stated_absent:
            out.append(([GRANTS], {TPB: False}))
        elif i < stated_present + stated_absent + others_present:
            out.append(([BOILERPLATE], {TPB: True}))
        else:
            out.append(([BOILERPLATE], {TPB: False}))
    return out


def test_a_statement_borne_out_by_the_labels_is_kept_with_its_counts():
    kept = select(_contracts(6, 0, 5))
    assert kept == {TPB: {"matched": 6, "present": 6, "confidence": round(7 / 8, 4)}}


def test_a_statement_the_labels_contradict_or_rarely_seen_is_dropped():
    assert TPB not in select(_contracts(4, 2))  # 5/8 sure
    assert TPB not in select(_contracts(MIN_MATCHED - 1, 0))  # too few to tell


def test_a_type_with_many_labelled_contracts_is_left_to_the_scorers():
    assert TPB not in select(_contracts(6, 0, FEW_EXAMPLES - 6))
    assert TPB in select(_contracts(6, 0, FEW_EXAMPLES - 7))


def test_contracts_not_labelled_for_the_type_do_not_count():
    unlabelled = [([GRANTS], {}) for _ in range(10)]
    assert select(unlabelled + _contracts(6, 0)) == select(_contracts(6, 0))
