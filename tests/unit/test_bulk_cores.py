"""Pure cores of bulk runs: custom ids, the splitter at the API limits, the retry policy, the relay."""

from __future__ import annotations

import json
from datetime import UTC

import pytest

from bulk import retry
from bulk.body import BatchBody
from bulk.custom_ids import API_PATTERN, custom_id, parse
from bulk.relay import NextRequest, Relay
from bulk.split import (
    ENVELOPE_BYTES,
    MAX_BYTES,
    MAX_REQUESTS,
    Limits,
    RequestTooLarge,
    Splitter,
    body_size,
    encode,
    encoded_size,
    split,
)

# --------------------------------------------------------------------------- custom ids


def test_custom_id_round_trips_and_fits_the_api_pattern():
    cid = custom_id(12, 3456, 78)
    assert cid == "r12-d3456-t78" and API_PATTERN.match(cid)
    assert parse(cid) == (12, 3456, 78)
    big = custom_id(10**18, 10**18, 10**18)
    assert API_PATTERN.match(big) and parse(big).run_id == 10**18
    for bad in ("", "r1-d2", "x1-d2-t3", "r1-d2-t3-x"):
        with pytest.raises(ValueError):
            parse(bad)


# --------------------------------------------------------------------------- split


def test_api_limits_are_the_documented_ones():
    assert (MAX_REQUESTS, MAX_BYTES) == (100_000, 256_000_000)
    assert Limits() == Limits(100_000, 256_000_000)


def test_encoded_size_is_the_sdk_encoding():
    from anthropic._utils._json import openapi_dumps

    req = {
        "custom_id": "r1-d2-t3",
        "params": {"model": "m", "messages": [{"role": "user", "content": "€ “quote” ü"}]},
    }
    assert encoded_size(req) == len(openapi_dumps(req))
    assert body_size([encoded_size(req)] * 3) == len(openapi_dumps({"requests": [req] * 3}))
    assert body_size([]) == ENVELOPE_BYTES == len(json.dumps({"requests": []}, separators=(",", ":")))


def test_split_by_count_and_by_bytes_keeps_order_and_every_group_within_limits():
    items = [(f"r{i}", 100 + i % 7) for i in range(25)]
    groups = list(split(items, Limits(max_requests=10)))
    assert [len(g) for g in groups] == [10, 10, 5]
    assert [x for g in groups for x in g] == [k for k, _ in items]

    limit = Limits(max_requests=1000, max_bytes=ENVELOPE_BYTES + 350)
    sizes = dict(items)
    groups = list(split(items, limit))
    assert [x for g in groups for x in g] == [k for k, _ in items]
    for g in groups:
        assert body_size(sizes[k] for k in g) <= limit.max_bytes
    # greedy: the next item would not have fitted in the previous group
    for g, nxt in zip(groups, groups[1:]):
        assert body_size([sizes[k] for k in g] + [sizes[nxt[0]]]) > limit.max_bytes


def test_a_request_exactly_at_the_limit_fits_and_one_byte_more_does_not():
    limit = Limits(max_requests=5, max_bytes=ENVELOPE_BYTES + 100)
    s = Splitter(limit)
    assert s.fits_alone(100) and not s.fits_alone(101)
    assert s.add("a", 100) is None and s.add("b", 1) == ["a"]
    assert s.flush() == ["b"] and s.flush() is None
    with pytest.raises(RequestTooLarge):
        s.add("c", 101)
    # two items that fit only without the comma between them go to separate batches
    limit = Limits(max_requests=5, max_bytes=ENVELOPE_BYTES + 100)
    assert list(split([("x", 50), ("y", 50)], limit)) == [["x"], ["y"]]
    assert list(split([("x", 50), ("y", 49)], limit)) == [["x", "y"]]


def test_a_batch_body_on_disk_is_the_sdks_body_byte_for_byte_and_can_be_sent_again(monkeypatch):
    from anthropic._utils._json import openapi_dumps

    monkeypatch.setattr("bulk.body.PIECE", 16)  # read back in many pieces
    requests = [
        {"custom_id": f"r1-d{i}-t3", "params": {"messages": [{"role": "user", "content": f"€ “{i}” ü"}]}}
        for i in range(5)
    ]
    with BatchBody() as body:
        assert b"".join(body) == openapi_dumps({"requests": []}) and body.size == ENVELOPE_BYTES
        for req in requests:
            body.add(encode(req))
        first = b"".join(body)
        assert first == openapi_dumps({"requests": requests})
        assert body.count == 5 and body.size == len(first) == body_size(encoded_size(r) for r in requests)
        assert (
            len(list(body)) > 5 and b"".join(body) == first
        )  # a second pass (an SDK retry) sends it all again


def test_limits_must_allow_a_request():
    with pytest.raises(ValueError):
        Limits(max_requests=0)
    with pytest.raises(ValueError):
        Limits(max_bytes=ENVELOPE_BYTES)


# --------------------------------------------------------------------------- retry policy


def test_failures_go_round_twice_then_fail_for_a_person():
    note = retry.failure_note(
        "errored", "msgbatch_1", error_type="overloaded_error", error_message="Overloaded"
    )
    assert "overloaded_error: Overloaded" in note and "msgbatch_1" in note
    d1 = retry.decide("errored", 0, note)
    d2 = retry.decide("expired", d1.failures_in_row, retry.failure_note("expired", "b2"))
    d3 = retry.decide(
        "max_tokens", d2.failures_in_row, retry.failure_note("max_tokens", "b3", max_tokens=8192)
    )
    assert (d1.action, d2.action, d3.action) == ("retry", "retry", "fail")
    assert d3.failures_in_row == retry.MAX_FAILURES_IN_ROW == 3
    assert "3 batches in a row" in d3.note and "8192" in d3.note
    for kind in ("expired", "canceled"):
        assert kind in retry.failure_note(kind, "b")
    with pytest.raises(ValueError):
        retry.decide("succeeded", 0, "")
    with pytest.raises(ValueError):
        retry.failure_note("succeeded", "b")


def test_note_goes_into_the_last_user_message_after_tool_results_without_touching_the_original():
    snap = {
        "history": [
            {"role": "user", "content": [{"type": "text", "text": "question"}]},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "extract_clause", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "bad", "is_error": True}],
            },
        ],
        "position": {"max_tokens": 4096},
    }
    out = retry.add_note(snap, "[batch note] expired")
    assert [b["type"] for b in out["history"][-1]["content"]] == ["tool_result", "text"]
    assert out["history"][-1]["content"][-1]["text"] == "[batch note] expired"
    assert len(snap["history"][-1]["content"]) == 1  # unchanged
    assert out["position"] == {"max_tokens": 4096}
    plain = retry.add_note({"history": [{"role": "user", "content": "q"}]}, "n")
    assert plain["history"][0]["content"] == [{"type": "text", "text": "q"}, {"type": "text", "text": "n"}]
    assert retry.add_note(None, "n")["history"] == [
        {"role": "user", "content": [{"type": "text", "text": "n"}]}
    ]


# --------------------------------------------------------------------------- relay


def test_relay_hands_out_the_reply_once_then_asks_for_the_next_request():
    relay = Relay("reply")
    assert relay.messages.create(model="m") == "reply"
    with pytest.raises(NextRequest) as caught:
        relay.messages.create(model="m", max_tokens=5)
    assert caught.value.params == {"model": "m", "max_tokens": 5}
    with pytest.raises(NextRequest):
        Relay().messages.create()


# --------------------------------------------------------------------------- a creation that got no answer


def test_a_batch_is_taken_as_the_jobs_only_when_it_can_be_nobody_elses():
    from datetime import datetime
    from types import SimpleNamespace

    import anthropic
    import httpx2

    from bulk.adopt import choose, may_have_been_taken

    when = datetime(2026, 1, 1, 3, 0, tzinfo=UTC)
    a, b = (SimpleNamespace(id=f"msgbatch_{n}", created_at=when) for n in "ab")
    assert choose([a], set(), rivals=0, complete=True).batch is a
    assert choose([a, b], {"msgbatch_a"}, rivals=0, complete=True).batch is b
    assert choose([a], {"msgbatch_a"}, rivals=0, complete=True) == choose([], set(), rivals=0, complete=True)
    for doubtful in (
        choose([a, b], set(), rivals=0, complete=True),
        choose([a], set(), rivals=1, complete=True),
        choose([], set(), rivals=0, complete=False),
    ):
        assert doubtful.batch is None and doubtful.doubt
    assert "msgbatch_a" in choose([a, b], set(), rivals=0, complete=True).doubt

    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages/batches")

    def answered(status):
        return anthropic.APIStatusError("x", response=httpx2.Response(status, request=request), body=None)

    assert may_have_been_taken(anthropic.APITimeoutError(request=request))
    assert may_have_been_taken(anthropic.APIConnectionError(request=request))
    assert may_have_been_taken(answered(500)) and may_have_been_taken(answered(504))
    assert not any(may_have_been_taken(answered(s)) for s in (400, 413, 429, 529))
