"""Stratification, pass/fail rules, Wilson intervals and the silent-source rate (pure, no database)."""

from __future__ import annotations

import pytest

from extraction.evaluation import stratify as st


@pytest.mark.parametrize(
    "page, section",
    [
        (1, "front"),
        (30, "front"),
        (31, "middle"),
        (150, "middle"),
        (151, "back"),
        (420, "back"),
        (None, "none"),
    ],
)
def test_page_sections_default_bounds(page, section):
    assert st.page_section(page) == section


def test_page_sections_follow_configured_bounds():
    bounds = st.SectionBounds(front_max=5, back_after=10)
    assert [st.page_section(p, bounds) for p in (5, 6, 10, 11)] == ["front", "middle", "middle", "back"]


def test_bounds_must_be_ordered():
    with pytest.raises(ValueError):
        st.SectionBounds(front_max=50, back_after=20)


# --------------------------------------------------------------------------- Wilson interval
def test_one_of_one_is_not_certain():
    low, high = st.wilson_interval(1, 1)
    assert high == 1.0
    assert low == pytest.approx(0.2065, abs=1e-4)


def test_wilson_known_value_and_symmetry():
    low, high = st.wilson_interval(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    low2, high2 = st.wilson_interval(2, 10)
    assert low2 == pytest.approx(1 - high) and high2 == pytest.approx(1 - low)


def test_wilson_edges():
    assert st.wilson_interval(0, 0) == (0.0, 1.0)
    low, high = st.wilson_interval(0, 1)
    assert low == 0.0 and high == pytest.approx(0.7935, abs=1e-4)
    low, high = st.wilson_interval(500, 500)
    assert high == 1.0 and 0.99 < low < 1.0
    with pytest.raises(ValueError):
        st.wilson_interval(3, 2)


def test_interval_narrows_as_n_grows():
    widths = [hi - lo for lo, hi in (st.wilson_interval(9 * k, 10 * k) for k in (1, 10, 100))]
    assert widths[0] > widths[1] > widths[2]


def test_pass_rate():
    assert st.pass_rate(3, 4) == 0.75
    assert st.pass_rate(0, 0) is None


# --------------------------------------------------------------------------- outcome rules
def test_review_decisions():
    assert st.review_passes("accept", corrected=True) is False  # it confirms the reviewer's text
    assert st.review_passes("accept") is True
    assert st.review_passes("reject") is False
    assert st.review_passes("correct") is False
    with pytest.raises(ValueError):
        st.review_passes("maybe")


@pytest.mark.parametrize(
    "status, clause_text, corrected, restated",
    [
        ("not_found", "", "not_found", True),  # "corrected" to the engine's own not_found
        ("not_found", "", " not_found\n", True),
        ("found", "The cap is $247.83.", "The cap is $247.83.", True),  # corrected away, then back
        ("found", "The cap is\r\n$247.83.", "The cap is\n$247.83.", True),  # browsers post CRLF
        (
            "found",
            "The cap\nis  $247.83.",
            "The cap is $247.83.",
            True,
        ),  # a PDF's line break joined: spacing only
        ("found", "The cap is $247.83.", "The Cap is $247.83.", False),  # capitals are a correction
        ("found", "The cap is $247.83.", "The cap is $247.8 3.", False),  # so is a space inside a value
        ("found", "The cap is $247.83.", "not_found", False),
        ("not_found", "", "The cap is $247.83.", False),
        ("found", "", "", False),  # no correction at all
    ],
)
def test_a_correction_that_restates_the_engines_answer(status, clause_text, corrected, restated):
    assert st.restates(corrected, status, clause_text) is restated


def test_a_correction_equal_to_the_engines_answer_is_a_pass():
    assert st.review_passes("correct", corrected=True, restated=True) is True
    assert st.review_passes("accept", corrected=True, restated=True) is True
    assert st.review_passes("reject", corrected=True, restated=True) is False


@pytest.mark.parametrize(
    "status, decision, corrected, absent",
    [
        ("not_found", "accept", "", True),
        ("found", "correct", "not_found", True),
        ("found", "correct", "  not_found \n", True),
        ("found", "correct", "Not found", False),  # exactly "not_found" only
        ("found", "correct", "The cap is $247.83", False),
        ("found", "accept", "", False),
        ("not_found", "reject", "", False),
        ("unverified", "reject", "", False),
        ("found", "accept", "not_found", True),  # an accept after a correction to not_found confirms it
        ("not_found", "accept", "The cap is $247.83", False),  # ... after a correction to a text: present
        ("found", "reject", "not_found", False),  # the correction was rejected
    ],
)
def test_marked_absent(status, decision, corrected, absent):
    assert st.marks_absent(status, decision, corrected) is absent


@pytest.mark.parametrize(
    "status, decision, corrected, present",
    [
        ("found", "accept", "", True),
        (
            "unverified",
            "accept",
            "",
            True,
        ),  # the reviewer found the clause there, citations unverified or not
        ("not_found", "reject", "", True),  # rejecting "not found" means "it is there"
        ("found", "reject", "not_found", True),  # ... also when "not_found" is a standing correction
        ("unverified", "reject", "", False),  # a rejected clause text says nothing about presence
        ("not_found", "accept", "", False),
        ("not_found", "correct", "The cap is $247.83", True),
        ("not_found", "accept", "The cap is $247.83", True),  # accepted after the correction
        ("found", "accept", "not_found", False),
        ("found", "reject", "", False),
    ],
)
def test_marked_present(status, decision, corrected, present):
    assert st.marks_present(status, decision, corrected) is present


def test_cuad_word_set_and_jaccard():
    assert st.word_set("The Licensee shall pay, in full.") == {"licensee", "shall", "pay", "in", "full"}
    assert st.jaccard("Licensee shall pay", "the licensee SHALL pay!") == 1.0
    assert st.jaccard("w b c d", "c d e f") == pytest.approx(2 / 6)
    assert st.jaccard("a cap", "the cap") == 1.0  # articles do not count
    assert st.jaccard("", "") == 1.0
    assert st.best_jaccard("x", []) == 0.0


@pytest.mark.parametrize(
    "present, status, text, passed",
    [
        (True, "found", "governed by the laws of Delaware", True),  # 5 of 8 words -> 0.625
        (True, "found", "governed by Delaware law", False),  # 3 of 9 -> 0.33
        (True, "not_found", "", False),
        (True, "unverified", "This Agreement is governed by the laws of Delaware.", False),
        (False, "not_found", "", True),
        (False, "found", "anything at all", False),
        (False, "unverified", "anything", False),
    ],
)
def test_benchmark_pass_criterion(present, status, text, passed):
    gold = ["This Agreement is governed by the laws of Delaware."] if present else []
    assert st.benchmark_passes(present, status, text, gold) is passed


def test_jaccard_threshold_is_inclusive():
    # {a1 a2} vs {a1 a2 b1 b2}: exactly 0.5
    assert st.benchmark_passes(True, "found", "a1 a2", ["a1 a2 b1 b2"]) is True


# --------------------------------------------------------------------------- strata
ROWS = [
    # doc_type, clause_type, page, passed
    ("Services", "Governing Law", 3, True),
    ("Services", "Governing Law", 12, True),
    ("Services", "Cap On Liability", 160, False),
    ("Services", "Cap On Liability", 175, True),
    ("Services", "Cap On Liability", 80, False),
    ("Lease", "Governing Law", None, True),
    ("Lease", "Governing Law", 2, False),
    ("Lease", "Termination", None, True),
    ("Services", "Termination", None, False),
]


def _rows():
    return [{"doc_type": d, "clause_type": c, "page": p, "passed": ok} for d, c, p, ok in ROWS]


def test_stratify_hand_computed_worst_first():
    strata = st.stratify(_rows())
    table = [(s.doc_type, s.clause_type, s.section, s.passes, s.n) for s in strata]
    assert table == [
        ("Lease", "Governing Law", "front", 0, 1),
        ("Services", "Cap On Liability", "middle", 0, 1),
        ("Services", "Termination", "none", 0, 1),
        ("Services", "Cap On Liability", "back", 1, 2),
        ("Services", "Governing Law", "front", 2, 2),  # more rows: surer, so listed before the 1-of-1s
        ("Lease", "Governing Law", "none", 1, 1),
        ("Lease", "Termination", "none", 1, 1),
    ]
    assert [s.below_target for s in strata] == [True, True, True, True, False, False, False]
    assert st.totals(strata) == (9, 5)
    back = strata[3]
    assert back.rate == 0.5 and back.fails == 1
    assert (round(back.low, 4), round(back.high, 4)) == (0.0945, 0.9055)


def test_below_target_edges():
    assert not st.Stratum("d", "c", "front", n=10, passes=9).below_target  # exactly 90%
    assert st.Stratum("d", "c", "front", n=100, passes=89).below_target
    assert not st.Stratum("d", "c", "front", n=0, passes=0).below_target
    strata = st.build_strata({("d", "c", "front"): [1, 0], ("d", "c", "back"): [5, 1]})
    assert [s.section for s in st.below_target(strata, min_n=5)] == ["back"]


def test_worst_first_prefers_lower_upper_bound_on_ties():
    strata = st.build_strata({("a", "x", "front"): [1, 0], ("b", "x", "front"): [20, 0]})
    assert [s.doc_type for s in strata] == ["b", "a"]


def test_counts_merge_before_intervals():
    one = [{"doc_type": "d", "clause_type": "c", "section": "front", "n": 1, "passes": 1}]
    two = [
        {"doc_type": "d", "clause_type": "c", "section": "front", "n": 3, "passes": 1},
        {"doc_type": "d", "clause_type": "c", "section": "back", "n": 2, "passes": 2},
    ]
    merged = st.merge_counts(one, two)
    assert merged == {("d", "c", "front"): [4, 2], ("d", "c", "back"): [2, 2]}
    strata = st.build_strata(merged)
    assert [(s.section, s.rate) for s in strata] == [("front", 0.5), ("back", 1.0)]


# --------------------------------------------------------------------------- silent source
def _review(document, clause, status, decision, corrected=""):
    return {
        "document": document,
        "clause_type": clause,
        "status": status,
        "decision": decision,
        "corrected_text": corrected,
    }


def test_absent_pairs_from_reviews():
    reviews = [
        _review("B", "GL", "not_found", "accept"),
        _review("B", "GL", "found", "correct", "not_found"),
        _review("B", "Term", "not_found", "accept"),
        _review("A", "Term", "not_found", "reject"),  # the reviewer says it is there
        _review("C", "Cap", "not_found", "accept"),
        _review("C", "Cap", "found", "accept"),  # contradicted: confirmed present elsewhere
    ]
    assert st.absent_pairs(reviews) == {("B", "GL"), ("B", "Term")}


def test_a_rejected_not_found_or_an_accepted_unverified_clause_is_no_absent_pair():
    reviews = [
        _review(1, "Termination", "not_found", "accept"),
        _review(1, "Termination", "not_found", "reject"),  # a second reviewer: "it is on p.14"
        _review(2, "Cap", "not_found", "accept"),
        _review(2, "Cap", "unverified", "accept"),  # another run's answer, accepted as the clause
    ]
    assert st.absent_pairs(reviews) == set()
    # Each alone: the rejected not_found is a fail, never a correct silent answer on an absent pair.
    assert st.absent_pairs([reviews[1]]) == set() and st.review_passes("reject") is False


def test_silent_source_rate_and_invented_list():
    answers = [
        {"id": 6, "status": "not_found"},
        {"id": 7, "status": "found"},
        {"id": 8, "status": "not_found"},
        {"id": 9, "status": "unverified"},
    ]
    result = st.silent_source(answers)
    assert (result.silent, result.n, result.rate) == (2, 4, 0.5)
    assert [row["id"] for row in result.invented] == [7, 9]
    assert result.below_target
    assert not st.silent_source([{"status": "not_found"}] * 19 + [{"status": "found"}]).below_target  # 95%
    assert st.silent_source([]).rate is None and not st.silent_source([]).below_target


def test_pairs_that_never_ran_are_kept_apart_from_the_silent_source_rate():
    answers = [
        {"id": 1, "status": "not_found"},
        {"id": 2, "status": "found"},
        {"id": 3, "status": "failed"},
        {"id": 4, "status": "missing"},
    ]
    result = st.silent_source(answers)
    assert (result.silent, result.n) == (1, 2)
    assert [row["id"] for row in result.invented] == [2] and [row["id"] for row in result.not_run] == [3, 4]
    merged = st.merge_silent([result.as_counts(), {"n": 1, "silent": 1, "invented": []}])
    assert (merged.silent, merged.n, len(merged.not_run)) == (2, 3, 2)


def test_silent_counts_merge():
    merged = st.merge_silent(
        [{"n": 3, "silent": 3, "invented": []}, {"n": 2, "silent": 1, "invented": [{"id": 1}]}]
    )
    assert (merged.silent, merged.n, merged.invented) == (4, 5, [{"id": 1}])


def test_a_list_of_parties_is_judged_value_by_value():
    gold = ["Eton Pharmaceuticals, Inc.", "Eton"]
    names = ["Aucta Pharmaceuticals Limited", "Eton Pharmaceuticals, Inc.", "Marine MP, LLC"]
    listed = st.LIST_SEPARATOR.join(names)
    assert st.answer_texts(listed, names) == names
    assert st.benchmark_passes(True, "found", listed, gold, quotes=names) is True
    assert st.benchmark_passes(True, "found", listed, gold) is False  # judged whole, the list dilutes it
    # an answer of several passages is judged whole, as its clause text is not its quotes listed
    passages = ["The licence is exclusive in the Territory.", "Eton Pharmaceuticals, Inc."]
    assert st.answer_texts("\n\n".join(passages), passages) == ["\n\n".join(passages)]
    assert st.benchmark_passes(True, "found", "\n\n".join(passages), gold, quotes=passages) is False
