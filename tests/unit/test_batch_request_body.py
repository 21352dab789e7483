"""A batch request's params are a Messages request body: the SDK's client options stay out of it."""

import pytest

from bulk.relay import NextRequest, Relay


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
