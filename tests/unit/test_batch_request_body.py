"""A batch request's params are a Messages request body: the SDK's client options stay out of it."""

import pytest

from bulk.relay import NextRequest, Relay, request_body
from tests.anthropic_contract import batch_errors


def test_the_agents_timeout_and_headers_never_reach_a_batch_request():
    with pytest.raises(NextRequest) as caught:
        Relay().messages.create(
            model="m",
            max_tokens=5,
            messages=[],
            timeout=120.0,
            extra_headers={"x-test": "1"},
            extra_query={"q": "1"},
        )
    assert caught.value.params == {"model": "m", "max_tokens": 5, "messages": []}


def test_an_extra_body_is_merged_into_the_request_as_the_sdk_sends_it():
    with pytest.raises(NextRequest) as caught:
        Relay().messages.create(model="m", max_tokens=5, extra_body={"metadata": {"user_id": "u1"}})
    assert caught.value.params == {"model": "m", "max_tokens": 5, "metadata": {"user_id": "u1"}}


def test_the_relays_params_are_a_body_the_batch_api_takes_and_the_options_were_not():
    sent = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "Find the cap."}],
        "timeout": 120.0,
    }
    assert batch_errors({"requests": [{"custom_id": "r1-d1-t1", "params": request_body(sent)}]}) == []
    # what the relay used to hand over (the call's keyword arguments as they were): the API refused it
    assert batch_errors({"requests": [{"custom_id": "r1-d1-t1", "params": sent}]}) == [
        "requests.0.params.timeout: Extra inputs are not permitted"
    ]
