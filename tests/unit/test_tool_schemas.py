"""Tool schemas: a found clause without a citation must never get through."""

import copy
import json

import jsonschema
import pytest

from extraction import catalog
from extraction.agent.tool_schemas import (
    READ_CHUNK,
    REGEX_DOCUMENT,
    SEARCH_DOCUMENT,
    all_tools,
    extract_clause_schema,
    extract_clause_tool,
    load_skill_tool,
    read_extract_clause,
    validate_extract_clause,
)

GOOD = {
    "clause_id": "cap-on-liability-1",
    "clause_type": "Cap On Liability",
    "clause_text": "In no event shall liability exceed $247.83.",
    "citations": [{"chunk_id": "c_ab12", "page": 3, "quote": "In no event shall liability exceed $247.83."}],
}
NOT_FOUND = {"clause_id": "x-1", "clause_type": "Governing Law", "clause_text": "not_found", "citations": []}

BAD = [
    ("found, empty citations", {**GOOD, "citations": []}),
    ("found, citations missing", {k: v for k, v in GOOD.items() if k != "citations"}),
    ("not_found with citations", {**NOT_FOUND, "citations": GOOD["citations"]}),
    ("unknown clause type", {**GOOD, "clause_type": "Cap on liability"}),
    ("citation without quote", {**GOOD, "citations": [{"chunk_id": "c", "page": 1}]}),
    ("citation without chunk", {**GOOD, "citations": [{"page": 1, "quote": "abc"}]}),
    ("page zero", {**GOOD, "citations": [{"chunk_id": "c", "page": 0, "quote": "abc"}]}),
    ("page as string", {**GOOD, "citations": [{"chunk_id": "c", "page": "3", "quote": "abc"}]}),
    ("empty clause text", {**GOOD, "clause_text": ""}),
    ("extra field", {**GOOD, "confidence": 0.9}),
    ("citations not a list", {**GOOD, "citations": {"chunk_id": "c"}}),
]


def schema_errors(schema, data):
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return list(cls(schema).iter_errors(data))


def test_good_inputs_pass_schema_and_validator():
    schema = extract_clause_schema()
    for data in (GOOD, NOT_FOUND):
        assert schema_errors(schema, data) == []
        assert validate_extract_clause(data) == []


@pytest.mark.parametrize("label,data", BAD, ids=[b[0] for b in BAD])
def test_bad_inputs_fail_schema_and_validator(label, data):
    assert schema_errors(extract_clause_schema(), data), label
    assert validate_extract_clause(data), label


def test_no_extraction_tool_lets_a_found_clause_through_without_citation():
    """Every tool whose schema has clause_text + citations must refuse a citation-less found clause."""
    tools = all_tools([n for n in ("payment", "governing-law")])
    extraction_tools = [
        t for t in tools if {"clause_text", "citations"} <= set(t["input_schema"]["properties"])
    ]
    assert [t["name"] for t in extraction_tools] == ["extract_clause"]
    for tool in extraction_tools:
        schema = tool["input_schema"]
        for clause_text in ("Some clause.", "NOT_FOUND", "not found", " not_found", "n/a", "none"):
            for cits in ([], None):
                data = copy.deepcopy(GOOD)
                data["clause_text"] = clause_text
                if cits is None:
                    del data["citations"]
                else:
                    data["citations"] = cits
                assert schema_errors(schema, data), (tool["name"], clause_text, cits)
                assert validate_extract_clause(data), (clause_text, cits)


def test_citations_sent_as_a_json_string_are_read_as_the_list_it_holds():
    # Models sometimes write the array as text: "citations": "[{\"chunk_id\": ...}]".
    as_text = {**GOOD, "citations": json.dumps(GOOD["citations"])}
    read = read_extract_clause(as_text)
    assert read["citations"] == GOOD["citations"] and validate_extract_clause(read) == []
    assert as_text["citations"] == json.dumps(GOOD["citations"])  # the input itself is left as sent
    assert validate_extract_clause(read_extract_clause({**NOT_FOUND, "citations": "[]"})) == []


def test_a_page_sent_as_digits_is_read_as_the_number():
    # "page": "3" was refused ("page must be an integer >= 1") and cost the clause its one retry, although the
    # server computes the page from the cited chunk and never trusts the model's number
    quoted = {**GOOD, "citations": [{**GOOD["citations"][0], "page": " 3 "}]}
    read = read_extract_clause(quoted)
    assert read["citations"] == GOOD["citations"] and validate_extract_clause(read) == []
    assert quoted["citations"][0]["page"] == " 3 "  # the input itself is left as sent
    for page in ("three", "3.0", "-3", "", "٣"):  # no number, or not a plain one: still named
        errors = validate_extract_clause(
            read_extract_clause({**GOOD, "citations": [{**GOOD["citations"][0], "page": page}]})
        )
        assert "citation 1: page must be an integer >= 1" in errors, page


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        "[{'chunk_id': 'c_ab12', 'page': 3}]",
        "chunk c_ab12, page 3",
        '["c_ab12"]',
        '{"chunk_id": "c_ab12", "page": 3, "quote": "In no event"}',
    ],
)
def test_citations_as_a_string_that_is_no_list_of_objects_stay_a_clear_error(text):
    errors = validate_extract_clause(read_extract_clause({**GOOD, "citations": text}))
    assert errors  # and a found clause with "[]" is still a found clause without citation
    assert any("citation" in e for e in errors)
    if text != "[]":
        assert any("string" in e and "JSON array" in e for e in errors), errors


def test_enum_is_the_catalog():
    schema = extract_clause_schema()
    assert schema["properties"]["clause_type"]["enum"] == catalog.names()
    assert "Governing Law" in schema["properties"]["clause_type"]["enum"]


def test_tool_definitions_are_anthropic_shaped_and_valid_schemas():
    tools = all_tools(["payment"])
    assert [t["name"] for t in tools] == [
        "search_document",
        "read_chunk",
        "regex_document",
        "read_history",
        "load_skill",
        "extract_clause",
    ]
    for t in tools:
        assert set(t) == {"name", "description", "input_schema"}
        assert t["input_schema"]["type"] == "object"
        jsonschema.validators.validator_for(t["input_schema"]).check_schema(t["input_schema"])
    assert "load_skill" not in [t["name"] for t in all_tools([])]


@pytest.mark.parametrize(
    "tool,good,bad",
    [
        (SEARCH_DOCUMENT, {"query": "cap on liability", "k": 5}, {"query": "x", "k": 0}),
        (READ_CHUNK, {"chunk_id": "c1", "neighbours": 1}, {"chunk_id": "c1", "neighbours": 9}),
        (REGEX_DOCUMENT, {"pattern": r"\$\d+", "max_matches": 10}, {"max_matches": 10}),
    ],
)
def test_helper_tool_schemas(tool, good, bad):
    assert schema_errors(tool["input_schema"], good) == []
    assert schema_errors(tool["input_schema"], bad)


def test_load_skill_enum():
    schema = load_skill_tool(["payment", "governing-law"])["input_schema"]
    assert schema_errors(schema, {"name": "payment"}) == []
    assert schema_errors(schema, {"name": "other"})


def test_extract_clause_tool_with_a_subset_of_types():
    tool = extract_clause_tool(["Payment"])
    assert tool["input_schema"]["properties"]["clause_type"]["enum"] == ["Payment"]
    assert validate_extract_clause({**GOOD, "clause_type": "Payment"}, ["Payment"]) == []
    assert validate_extract_clause(GOOD, ["Payment"])
