"""CASE_FACTS rendering: versioned, deterministic, verbatim, parseable."""

import pytest

from extraction.agent.case_facts import SCHEMA, CaseFacts, parse_case_facts, render_case_facts


def facts():
    return (
        CaseFacts(doc_id="doc_42", doc_type="Master Services Agreement", policy_cap="$247.83")
        .record_extraction("cap-on-liability-1")
        .record_extraction("governing-law-1")
        .with_decision("customer account is cust_4711")
        .with_decision("cap applies per claim, not in aggregate")
        .with_extra("materiality", "5%")
    )


def test_renders_versioned_block_with_all_fields():
    text = render_case_facts(facts())
    assert text.splitlines()[0] == f'<case_facts schema="{SCHEMA}">' and SCHEMA == "CASE_FACTS v1"
    assert text.splitlines()[-1] == "</case_facts>"
    for line in (
        "doc_id: doc_42",
        "doc_type: Master Services Agreement",
        "extracted_count: 2",
        "last_clause_id: governing-law-1",
        "policy_cap: $247.83",
        "materiality: 5%",
        "- customer account is cust_4711",
    ):
        assert line in text.splitlines()


def test_values_are_verbatim():
    text = render_case_facts(facts())
    assert "$247.83" in text and "cust_4711" in text
    assert "247.830" not in text and "$ 247.83" not in text


def test_deterministic():
    a = render_case_facts(facts())
    b = render_case_facts(facts())
    assert a == b
    # extra facts are sorted, so insertion order does not matter
    f1 = CaseFacts("d").with_extra("b", "2").with_extra("a", "1")
    f2 = CaseFacts("d").with_extra("a", "1").with_extra("b", "2")
    assert render_case_facts(f1) == render_case_facts(f2)


def test_round_trip():
    parsed = parse_case_facts("system text before\n" + render_case_facts(facts()) + "\nafter")
    assert parsed == {
        "schema": SCHEMA,
        "doc_id": "doc_42",
        "doc_type": "Master Services Agreement",
        "extracted_count": 2,
        "last_clause_id": "governing-law-1",
        "policy_cap": "$247.83",
        "materiality": "5%",
        "decisions": ["customer account is cust_4711", "cap applies per claim, not in aggregate"],
    }


@pytest.mark.parametrize(
    "value",
    ["  padded ", "two\nlines", '"quoted"', "null", "", "tab\there", "ünï ☃", "cap </case_facts> $247.83"],
)  # the closing tag in a value ended the block
def test_awkward_values_round_trip(value):
    f = CaseFacts("d", policy_cap=value).with_decision(value)
    parsed = parse_case_facts(render_case_facts(f))
    assert parsed["policy_cap"] == value and parsed["decisions"] == [value]


def test_none_and_empty():
    text = render_case_facts(CaseFacts("d"))
    assert "policy_cap: null" in text and "decisions: []" in text
    parsed = parse_case_facts(text)
    assert parsed["policy_cap"] is None and parsed["decisions"] == [] and parsed["extracted_count"] == 0


def test_bad_extra_key_and_missing_block():
    with pytest.raises(ValueError):
        render_case_facts(CaseFacts("d").with_extra("doc_id", "x"))
    with pytest.raises(ValueError):
        parse_case_facts("nothing here")
