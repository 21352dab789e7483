"""Clause catalog and skills."""

import json

import pytest

from extraction import catalog
from extraction.agent.skill_loader import (
    all_skills,
    list_skills,
    load_skill,
    parse_skill,
    skill_for_clause_type,
)


def test_cuad_names_match_gold_exactly(cuad_dir):
    with (cuad_dir / "gold.jsonl").open(encoding="utf-8") as fh:
        gold = {json.loads(line)["clause_type"] for line in fh if line.strip()}
    assert len(gold) == 41
    names = [c.name for c in catalog.CUAD_TYPES]
    assert set(names) == gold and len(names) == 41


def test_seed_types_and_totals():
    assert [t.slug for t in catalog.SEED_TYPES] == [
        "indemnification",
        "termination",
        "payment",
        "ip",
        "other",
    ]
    assert len(catalog.CATALOG) == 46
    assert len({t.name for t in catalog.CATALOG}) == 46
    assert len({t.slug for t in catalog.CATALOG}) == 46


def test_every_type_is_complete():
    for t in catalog.CATALOG:
        assert t.kind in (catalog.TEXT, catalog.VALUE)
        assert len(t.description) > 60 and t.description.endswith(".")
        assert len(t.query.split()) >= 6
        assert t.slug == catalog.slugify(t.name)
        assert catalog.get(t.name) is t and catalog.get(t.slug) is t


def test_a_type_is_told_apart_from_its_own_taxonomy_not_from_the_umbrella_types():
    convenience, termination = catalog.get("Termination For Convenience"), catalog.get("Termination")
    cuad_rivals = {t.name for t in catalog.rivals(convenience)}
    assert "Termination" not in cuad_rivals and "Change Of Control" in cuad_rivals
    assert len(cuad_rivals) == 40
    assert {t.name for t in catalog.rivals(termination)} == {"Indemnification", "Payment", "IP", "Other"}
    custom = catalog.ClauseType(
        "Escrow Release",
        "escrow-release",
        catalog.TEXT,
        "An admin's own type.",
        "escrow release conditions",
        "custom",
    )
    assert len(catalog.rivals(custom)) == 46


def test_value_kinds():
    values = {t.name for t in catalog.CATALOG if t.kind == catalog.VALUE}
    assert {
        "Parties",
        "Agreement Date",
        "Effective Date",
        "Expiration Date",
        "Renewal Term",
        "Notice Period To Terminate Renewal",
        "Governing Law",
        "Document Name",
    } == values


def test_slugify():
    assert catalog.slugify("Revenue/Profit Sharing") == "revenue-profit-sharing"
    assert catalog.slugify("Unlimited/All-You-Can-Eat-License") == "unlimited-all-you-can-eat-license"


def test_skills_cover_the_important_types():
    names = {n for n, _ in list_skills()}
    assert names == {
        "cap-on-liability",
        "governing-law",
        "termination-for-convenience",
        "anti-assignment",
        "indemnification",
        "payment",
        "non-compete",
        "change-of-control",
    }
    for s in all_skills():
        assert catalog.get(s.clause_type).slug == s.name
        assert s.version == "1" and len(s.description) > 40
        for heading in (
            "## What counts",
            "## What does not count",
            "## Correct and incorrect answers",
            "## Edge cases",
        ):
            assert heading in s.body, (s.name, heading)
        assert len(s.body) > 1500
    assert skill_for_clause_type("Cap On Liability") == "cap-on-liability"
    assert skill_for_clause_type("Audit Rights") is None


def test_load_skill_body_and_unknown():
    body = load_skill("governing-law")
    assert body.startswith("# skill: governing-law (v1)") and "What counts" in body
    assert "---" not in body.splitlines()[1]
    with pytest.raises(KeyError):
        load_skill("nope")


def test_parse_skill_errors():
    with pytest.raises(ValueError):
        parse_skill("no front matter")
    with pytest.raises(ValueError):
        parse_skill("---\nname: x\n---\nbody")
    s = parse_skill("---\nname: x\ndescription: d\nversion: 2\n---\n\nBody\n")
    assert (s.name, s.description, s.version, s.body) == ("x", "d", "2", "Body\n")


def test_every_type_has_an_example_clause_searched_as_a_query():
    from extraction.retrieval import DEFAULT_STRATEGY, query_text

    assert "example" in DEFAULT_STRATEGY.variants
    for t in catalog.CATALOG:
        words = len(t.example.split())
        assert words >= (2 if t.name == "Document Name" else 8), t.name
        assert query_text(t, "example") == t.example
    blank = catalog.ClauseType("X", "x", catalog.TEXT, "d", "q", "custom")
    assert query_text(blank, "example") == ""  # no example: no such query


def test_front_matter_quotes_are_kept_inside_a_value_and_taken_off_only_as_a_pair():
    s = parse_skill(
        '---\nname: "mfn"\ndescription: Clauses headed "Most Favored Nation"\nversion: \'1\'\n---\nBody\n'
    )
    assert (s.name, s.version) == ("mfn", "1")  # a quoted value loses its quotes
    assert s.description == 'Clauses headed "Most Favored Nation"'  # a quote that ends a value is part of it
    s = parse_skill("---\nname: x\ndescription: \"Say 'best efforts'\"\nversion: 1\n---\nBody\n")
    assert s.description == "Say 'best efforts'"
