"""The Anthropic API's contract as the mocks hold requests to it (``tests.anthropic_contract``): a request
the API takes passes, and each thing it refuses is refused with the API's own words."""

import copy

import anthropic
import httpx2
import pytest

from extraction.agent.tool_schemas import all_tools
from tests.anthropic_contract import (
    BATCH_MAX_BYTES,
    BATCH_MAX_REQUESTS,
    batch_errors,
    batch_size_error,
    conversation_errors,
    messages_request_errors,
    messages_size_error,
    params_field_errors,
    strict_schema_errors,
    tool_definition_errors,
)
from tests.mock_anthropic import MockAnthropic, message, text_block, tool_use_block

USE = {"type": "tool_use", "id": "toolu_1", "name": "search_document", "input": {"query": "cap"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "chunk c1: the cap is $247.83"}
VALID = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 1024,
    "system": [
        {"type": "text", "text": "instructions", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "case facts"},
    ],
    "tools": all_tools(["payment"]),
    "tool_choice": {"type": "any"},
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Find the cap."}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Searching."}, USE]},
        {"role": "user", "content": [RESULT, {"type": "text", "text": "[batch note] go on"}]},
    ],
}


def body(**changes):
    out = copy.deepcopy(VALID)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def with_messages(*messages):
    return body(messages=list(messages))


def test_a_request_the_api_takes_passes():
    assert messages_request_errors(VALID) == []
    assert messages_request_errors(body(tool_choice={"type": "tool", "name": "extract_clause"})) == []
    assert messages_request_errors(body(system="one string", tools=None, tool_choice=None)) == []
    assert batch_errors({"requests": [{"custom_id": "r1-d2-t3", "params": VALID}]}) == []


# --------------------------------------------------------------------------- fields


def test_a_field_the_api_does_not_know_is_refused_as_extra():
    assert messages_request_errors(body(timeout=120.0)) == ["timeout: Extra inputs are not permitted"]
    assert messages_request_errors(body(extra_headers={"x": "1"})) == [
        "extra_headers: Extra inputs are not permitted"
    ]
    bad_turn = {"role": "user", "content": "hi", "name": "auditor"}
    assert messages_request_errors(with_messages(bad_turn)) == [
        "messages.0.name: Extra inputs are not permitted"
    ]


@pytest.mark.parametrize("field", ["model", "max_tokens", "messages"])
def test_model_max_tokens_and_messages_are_required(field):
    assert messages_request_errors(body(**{field: None})) == [f"{field}: Field required"]


def test_a_tool_use_input_must_be_an_object():
    turn = {"role": "assistant", "content": [{**USE, "input": "{'query': "}]}
    errors = messages_request_errors(with_messages({"role": "user", "content": "q"}, turn))
    assert errors == ["messages.1.content.0.tool_use.input: Input should be a valid dictionary"]


# --------------------------------------------------------------------------- turns and tool use


def test_consecutive_turns_of_one_role_are_combined_not_refused():
    # "Consecutive user or assistant turns in your request will be combined into a single turn"
    split = with_messages(
        {"role": "user", "content": "Find the cap."},
        {"role": "user", "content": [{"type": "text", "text": "Quote it."}]},
        {"role": "assistant", "content": [USE]},
        {"role": "user", "content": [RESULT]},
        {"role": "user", "content": "And the notice period?"},
    )
    assert messages_request_errors(split) == []


def test_a_tool_use_left_without_its_result_is_refused():
    errors = messages_request_errors(
        with_messages(
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [USE]},
            {"role": "user", "content": "no result here"},
        )
    )
    assert errors == [
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    ]
    last = with_messages({"role": "user", "content": "q"}, {"role": "assistant", "content": [USE]})
    assert "without `tool_result` blocks" in messages_request_errors(last)[0]


def test_a_result_that_answers_no_tool_use_of_the_previous_turn_is_refused():
    stray = {**RESULT, "tool_use_id": "toolu_9"}
    errors = messages_request_errors(
        with_messages(
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [USE]},
            {"role": "user", "content": [RESULT, stray]},
        )
    )
    assert errors == [
        "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. Each "
        "`tool_result` block must have a corresponding `tool_use` block in the previous message."
    ]
    first = with_messages({"role": "user", "content": [RESULT]})
    assert "unexpected `tool_use_id`" in messages_request_errors(first)[0]


def test_tool_results_must_come_first_in_their_turn():
    late = with_messages(
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [USE]},
        {"role": "user", "content": [{"type": "text", "text": "Here are the results:"}, RESULT]},
    )
    assert messages_request_errors(late) == [
        "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages "
        "following `tool_use` blocks must begin with a matching number of `tool_result` blocks."
    ]
    combined = with_messages(  # combined with the turn before it, the result is no longer first
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [USE]},
        {"role": "user", "content": "a note"},
        {"role": "user", "content": [RESULT]},
    )
    assert "Did not find 1 `tool_result` block(s)" in messages_request_errors(combined)[0]


def test_tool_choice_must_name_one_of_the_tools():
    errors = messages_request_errors(body(tool_choice={"type": "tool", "name": "answer_clause"}))
    assert errors == ["tool_choice.tool.name: tool 'answer_clause' is not one of the tools in `tools`"]
    assert messages_request_errors(body(tool_choice={"type": "required"})) == [
        "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'"
    ]


# --------------------------------------------------------------------------- tools


def tool(schema, **extra):
    return {"name": "extract_clause", "description": "d", "input_schema": schema, **extra}


OBJECT = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]}


def test_a_schema_must_be_draft_2020_12_with_no_combinator_at_its_top():
    assert tool_definition_errors([tool(OBJECT)]) == []  # minimum: fine without strict
    invalid = {**OBJECT, "properties": {"n": {"type": "integer", "minimum": "one"}}}
    assert tool_definition_errors([tool(invalid)]) == [
        "tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12 "
        "(https://json-schema.org/draft/2020-12). Learn more about tool use at "
        "https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview."
    ]
    either = {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}
    assert tool_definition_errors([tool(either)]) == [
        "tools.0.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level"
    ]
    assert messages_request_errors(body(tools=[tool({"type": "array"})])) == [
        "tools.0.custom.input_schema.type: Input should be 'object'"
    ]


def test_strict_tools_take_the_documented_schema_subset_only():
    closed = {**OBJECT, "additionalProperties": False}
    errors = tool_definition_errors([tool(closed, strict=True)])
    assert errors == [
        "tools.0.custom.input_schema.properties.n: 'minimum' is not supported with strict tool use "
        "(JSON Schema limitations)"
    ]
    assert "'additionalProperties' must be explicitly set to false" in " ".join(
        tool_definition_errors([tool({**OBJECT, "properties": {}}, strict=True)])
    )
    many = {"type": "array", "items": {"type": "string"}, "minItems": 2}
    assert strict_schema_errors(many, "s") == ["s: 'minItems' only supports the values 0 and 1"]
    assert strict_schema_errors({**many, "minItems": 1}, "s") == []
    assert strict_schema_errors({"type": "string", "minLength": 1}, "s") == [
        "s: 'minLength' is not supported with strict tool use (JSON Schema limitations)"
    ]


def test_tool_names_follow_the_pattern_and_are_unique():
    assert tool_definition_errors([{**tool(OBJECT), "name": "extract clause"}]) == [
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
    ]
    assert tool_definition_errors([tool(OBJECT), tool(OBJECT)]) == ["tools: Tool names must be unique."]


# --------------------------------------------------------------------------- prompt caching


def test_a_malformed_cache_control_is_refused():
    system = copy.deepcopy(VALID["system"])
    system[0]["cache_control"] = {"type": "persistent"}
    assert messages_request_errors(body(system=system)) == [
        "system.0.cache_control.type: Input should be 'ephemeral'"
    ]
    system[0]["cache_control"] = {"type": "ephemeral", "ttl": "10m", "scope": "org"}
    assert messages_request_errors(body(system=system)) == [
        "system.0.cache_control.scope: Extra inputs are not permitted",
        "system.0.cache_control.ttl: Input should be '5m' or '1h'",
    ]


def test_more_than_four_breakpoints_are_refused():
    mark = {"type": "ephemeral"}
    tools = [{**t, "cache_control": mark} for t in VALID["tools"][:3]] + VALID["tools"][3:]
    assert messages_request_errors(body(tools=tools[:3] + VALID["tools"][3:])) == []  # 3 + the system's
    too_many = body(tools=tools, cache_control=mark)
    assert conversation_errors(too_many) == [
        "A maximum of 4 blocks with cache_control may be provided. Found 5."
    ]


def test_a_longer_ttl_after_a_shorter_one_is_refused():
    tools = copy.deepcopy(VALID["tools"])
    tools[-1]["cache_control"] = {"type": "ephemeral", "ttl": "5m"}
    system = copy.deepcopy(VALID["system"])
    system[0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    assert messages_request_errors(body(tools=tools, system=system)) == [
        "cache_control: a 1h cache entry must appear before any 5-minute cache entries"
    ]


# --------------------------------------------------------------------------- Message Batches


def batch(*ids, params=VALID):
    return {"requests": [{"custom_id": cid, "params": params} for cid in ids]}


def test_a_params_field_the_api_does_not_know_refuses_the_batch():
    # what the real API answered a batch whose requests carried the SDK's timeout option
    assert batch_errors(batch("r1-d1-t1", params=body(timeout=120.0))) == [
        "requests.0.params.timeout: Extra inputs are not permitted"
    ]
    assert params_field_errors(body(max_tokens=None), "requests.3.params.") == [
        "requests.3.params.max_tokens: Field required"
    ]


@pytest.mark.parametrize("cid", ["", "r1 d1", "r1/d1", "é", "x" * 65])
def test_a_custom_id_off_its_pattern_is_refused(cid):
    assert batch_errors(batch(cid)) == [
        "requests.0.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"
    ]


def test_a_custom_id_used_twice_in_one_batch_is_refused():
    assert batch_errors(batch("r1-d1-t1", "x" * 64, "r1-d1-t1")) == [
        "requests.2.custom_id: 'r1-d1-t1' is used by another request; custom_id values must be unique "
        "within a batch"
    ]


def test_a_batch_holds_1_to_100000_requests():
    assert batch_errors({"requests": []}) == [
        "requests: List should have at least 1 item after validation, not 0"
    ]
    small = {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]}
    over = {"requests": [{"custom_id": f"r{n}", "params": small} for n in range(BATCH_MAX_REQUESTS + 1)]}
    assert batch_errors(over) == [
        "requests: List should have at most 100000 items after validation, not 100001"
    ]
    over["requests"].pop()
    assert batch_errors(over) == []


def test_a_batch_over_256_mb_and_a_message_over_32_mb_are_too_large():
    assert batch_size_error(BATCH_MAX_BYTES) is None
    assert batch_size_error(BATCH_MAX_BYTES + 1) == (
        "Request exceeds the maximum allowed number of bytes (256000001 > 256000000)"
    )
    assert messages_size_error(32_000_000) is None and messages_size_error(32_000_001)


# --------------------------------------------------------------------------- the mock answers with them


def test_the_mock_refuses_with_the_apis_400_body():
    api = MockAnthropic(lambda b: message([text_block("ok")]))
    client = api.client(max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(
            model="m",
            max_tokens=5,
            messages=[{"role": "user", "content": "q"}, {"role": "assistant", "content": [USE]}],
        )
    err = caught.value
    assert err.status_code == 400 and err.request_id and err.body["request_id"] == err.request_id
    assert err.body["type"] == "error" and err.body["error"]["type"] == "invalid_request_error"
    assert "`tool_use` ids were found without `tool_result` blocks" in err.body["error"]["message"]
    assert api.refusals == [err.body["error"]["message"]]
    ok = client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "q"}])
    assert ok.content[0].text == "ok" and len(api.refusals) == 1


def test_the_mock_answers_a_body_over_the_size_limit_with_413():
    transport = MockAnthropic().transport
    big = b'{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"' + b"x" * 32_000_000 + b'"}]}'
    with httpx2.Client(transport=transport) as http:
        response = http.post("https://api.anthropic.com/v1/messages", content=big, headers={"x-api-key": "k"})
    assert response.status_code == 413 and response.json()["error"]["type"] == "request_too_large"


def test_a_batch_request_whose_conversation_breaks_the_contract_comes_back_errored():
    from tests.mock_anthropic_batches import BatchAPI

    api = BatchAPI(lambda b: message([tool_use_block("report_not_found", {})], "tool_use"))
    client = api.client(max_retries=0)
    broken = with_messages({"role": "user", "content": [RESULT]})
    created = client.messages.batches.create(
        requests=[{"custom_id": "good", "params": VALID}, {"custom_id": "bad", "params": broken}]
    )
    client.messages.batches.retrieve(created.id)
    lines = {r.custom_id: r.result for r in client.messages.batches.results(created.id)}
    assert lines["good"].type == "succeeded"
    assert lines["bad"].type == "errored" and lines["bad"].error.error.type == "invalid_request_error"
    assert "unexpected `tool_use_id`" in lines["bad"].error.error.message
