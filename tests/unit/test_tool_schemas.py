"""Tool schemas: a found clause without a citation must never get through, and a clause not found is
answered with its own tool."""

import copy
import json

import jsonschema
import pytest

from extraction import catalog
from extraction.agent.tool_schemas import (
    ANSWER_TOOLS,
    READ_CHUNK,
    REGEX_DOCUMENT,
    SEARCH_DOCUMENT,
    all_tools,
    answer_of,
    answer_tools,
    extract_clause_schema,
    extract_clause_tool,
    load_skill_tool,
    read_extract_clause,
    report_not_found_schema,
    validate_extract_clause,
    validate_report_not_found,
)
from tests.anthropic_contract import strict_schema_errors, tool_definition_errors

GOOD = {
    "clause_id": "cap-on-liability-1",
    "clause_type": "Cap On Liability",
    "clause_text": "In no event shall liability exceed $247.83.",
    "citations": [{"chunk_id": "c_ab12", "page": 3, "quote": "In no event shall liability exceed $247.83."}],
}
NOT_FOUND = {"clause_id": "x-1", "clause_type": "Governing Law", "clause_text": "not_found", "citations": []}
REPORT = {"clause_id": "x-1", "clause_type": "Governing Law"}  # report_not_found's input

BAD = [  # refused by the extract_clause schema and by the validator
    ("found, empty citations", {**GOOD, "citations": []}),
    ("found, citations missing", {k: v for k, v in GOOD.items() if k != "citations"}),
    ("unknown clause type", {**GOOD, "clause_type": "Cap on liability"}),
    ("citation without quote", {**GOOD, "citations": [{"chunk_id": "c", "page": 1}]}),
    ("citation without chunk", {**GOOD, "citations": [{"page": 1, "quote": "abc"}]}),
    ("page as string", {**GOOD, "citations": [{"chunk_id": "c", "page": "3", "quote": "abc"}]}),
    ("extra field", {**GOOD, "confidence": 0.9}),
    ("citations not a list", {**GOOD, "citations": {"chunk_id": "c"}}),
]
BOUNDS = [  # bounds the schema states in its descriptions only (the subset strict tool use takes)
    ("page zero", {**GOOD, "citations": [{"chunk_id": "c", "page": 0, "quote": "abc"}]}),
    ("one-character quote", {**GOOD, "citations": [{"chunk_id": "c", "page": 1, "quote": "a"}]}),
    ("empty clause text", {**GOOD, "clause_text": ""}),
    ("empty clause id", {**GOOD, "clause_id": ""}),
]


def schema_errors(schema, data):
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return list(cls(schema).iter_errors(data))


def test_good_inputs_pass_schema_and_validator():
    assert schema_errors(extract_clause_schema(), GOOD) == []
    assert validate_extract_clause(GOOD) == [] and answer_of("extract_clause", GOOD) == (GOOD, [])
    assert schema_errors(report_not_found_schema(), REPORT) == []
    assert validate_report_not_found(REPORT) == []
    assert answer_of("report_not_found", REPORT) == (NOT_FOUND, [])  # recorded as a clause not found is
    assert validate_extract_clause(NOT_FOUND) == []  # ... and that record is a valid answer


@pytest.mark.parametrize("label,data", BAD, ids=[b[0] for b in BAD])
def test_bad_inputs_fail_schema_and_validator(label, data):
    assert schema_errors(extract_clause_schema(), data), label
    assert validate_extract_clause(data), label


@pytest.mark.parametrize("label,data", BOUNDS, ids=[b[0] for b in BOUNDS])
def test_bounds_named_in_the_descriptions_are_the_validators(label, data):
    assert validate_extract_clause(data), label
    assert answer_of("extract_clause", data)[1], label


@pytest.mark.parametrize("cits", [[], GOOD["citations"]], ids=["without citations", "with citations"])
def test_not_found_through_extract_clause_is_sent_to_report_not_found(cits):
    _, errors = answer_of("extract_clause", {**NOT_FOUND, "citations": cits})
    assert any("call report_not_found" in e for e in errors), errors


@pytest.mark.parametrize(
    "label,data",
    [
        ("a clause text", {**REPORT, "clause_text": "In no event shall liability exceed $247.83."}),
        ("citations", {**REPORT, "citations": GOOD["citations"]}),
        ("no clause_id", {"clause_type": "Governing Law"}),
        ("no clause_type", {"clause_id": "x-1"}),
        ("unknown clause type", {**REPORT, "clause_type": "Governing law"}),
        ("empty clause id", {**REPORT, "clause_id": ""}),
        ("not an object", "not_found"),
    ],
)
def test_report_not_found_takes_the_question_and_nothing_else(label, data):
    if isinstance(data, dict) and data.get("clause_id") != "":
        assert schema_errors(report_not_found_schema(), data), label
    assert validate_report_not_found(data), label
    assert answer_of("report_not_found", data)[1], label


def test_no_answer_tool_lets_a_found_clause_through_without_citation():
    """Every tool that ends a clause question (and every tool with clause_text or citations) refuses a
    found clause without a citation, by its schema and by the server's validator."""
    tools = all_tools([n for n in ("payment", "governing-law")])
    carrying = [
        t["name"] for t in tools if {"clause_text", "citations"} & set(t["input_schema"]["properties"])
    ]
    assert set(carrying) <= set(ANSWER_TOOLS)
    answering = [t for t in tools if t["name"] in ANSWER_TOOLS]
    assert [t["name"] for t in answering] == ["extract_clause", "report_not_found"]
    for tool in answering:
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
                assert answer_of(tool["name"], data)[1], (tool["name"], clause_text, cits)
                assert validate_extract_clause(data), (clause_text, cits)


def test_the_answer_tools_keep_to_the_schema_subset_strict_tool_use_takes():
    """The citation rule is a keyword the API documents (minItems 1) and the answer tools use no keyword
    outside the subset ``strict: true`` takes: the API would enforce them as written. The conditional the
    schema used to carry (if/then/else) is outside it."""
    for tool in answer_tools():
        assert strict_schema_errors(tool["input_schema"], tool["name"]) == []
        assert tool_definition_errors([{**tool, "strict": True}]) == []
    assert extract_clause_schema()["properties"]["citations"]["minItems"] == 1
    conditional = {
        **extract_clause_schema(),
        "if": {"properties": {"clause_text": {"const": "not_found"}}, "required": ["clause_text"]},
        "then": {"properties": {"citations": {"maxItems": 0}}},
        "else": {"properties": {"citations": {"minItems": 1}}},
    }
    refused = strict_schema_errors(conditional, "input_schema")
    assert any("'if' is not supported" in e for e in refused), refused


def test_citations_sent_as_a_json_string_are_read_as_the_list_it_holds():
    # Models sometimes write the array as text: "citations": "[{\"chunk_id\": ...}]".
    as_text = {**GOOD, "citations": json.dumps(GOOD["citations"])}
    read = read_extract_clause(as_text)
    assert read["citations"] == GOOD["citations"] and validate_extract_clause(read) == []
    assert as_text["citations"] == json.dumps(GOOD["citations"])  # the input itself is left as sent
    assert answer_of("extract_clause", {**GOOD, "citations": "[]"})[1]  # a found clause without citation


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
        "report_not_found",
    ]
    assert tool_definition_errors(tools) == []  # what the API takes
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


def test_answer_tools_with_a_subset_of_types():
    tool = extract_clause_tool(["Payment"])
    assert tool["input_schema"]["properties"]["clause_type"]["enum"] == ["Payment"]
    assert validate_extract_clause({**GOOD, "clause_type": "Payment"}, ["Payment"]) == []
    assert validate_extract_clause(GOOD, ["Payment"])
    assert report_not_found_schema(["Payment"])["properties"]["clause_type"]["enum"] == ["Payment"]
    assert validate_report_not_found({**REPORT, "clause_type": "Payment"}, ["Payment"]) == []
    assert validate_report_not_found(REPORT, ["Payment"])
