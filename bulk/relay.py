"""The bridge between the agent loop and a batch: a stand-in for ``anthropic.Anthropic``.

The batch path drives the very same ``Agent`` the synchronous path uses (through
``AnthropicEngine``), so requests, tools, forcing, verification and retries are
theirs, not a copy. Only the transport differs: where the agent would call
``client.messages.create(**params)``,

* ``Relay()`` raises ``NextRequest(params)``: those params are the batch request;
* ``Relay(reply)`` returns ``reply`` (a ``Message`` from the batch results) once,
  then raises ``NextRequest`` for any further turn the agent wants (a retry after a
  failed verification, a nudge), which goes into the next batch.

A batch request's ``params`` are a Messages request body, and the API refuses a field it does not
know (``requests.0.params.timeout: Extra inputs are not permitted``). So the SDK's per-call client
options (``CLIENT_OPTIONS``: a timeout, extra headers or query parameters) never enter them; an
``extra_body`` is merged in, as the SDK merges it into the body it sends.
"""

from __future__ import annotations

from typing import Any

# Keyword arguments of ``client.messages.create`` that configure the HTTP call, not the request body.
CLIENT_OPTIONS = frozenset({"timeout", "extra_headers", "extra_query", "extra_body"})


def request_body(params: dict) -> dict:
    """The Messages request body that ``client.messages.create(**params)`` sends."""
    body = {k: v for k, v in params.items() if k not in CLIENT_OPTIONS}
    body.update(params.get("extra_body") or {})
    return body


class NextRequest(Exception):
    """The agent wants to send ``params`` to the Messages API."""

    def __init__(self, params: dict):
        super().__init__("the agent has a request for the next batch")
        self.params = params


class Relay:
    def __init__(self, reply: Any = None):
        self._reply = reply
        self.replies_given = 0

    @property
    def messages(self) -> Relay:  # client.messages.create(...): a property, as an attribute pointing
        return self  # at itself would make each Relay a cycle left to the cyclic collector

    def create(self, **params):
        if self._reply is not None:
            reply, self._reply = self._reply, None
            self.replies_given += 1
            return reply
        raise NextRequest(request_body(params))
