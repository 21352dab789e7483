"""One Messages API call for a whole-document task (the case summary, the contract type).

``create_message`` makes the call (the SDK retries 429/500/529 itself) and turns what can go
wrong into :class:`ClaudeCallError` with words for the user: an HTTP error with the API's own
message, no connection, a refusal, a context that did not fit. The clause agent
(``extraction.agent.loop``) has its own loop; these tasks are one question, one answer. Both hand
Celery's time limit, when the SDK wrapped it as a connection error, back to the task
(``reraise_interruption``). Both send Claude's reply back in the history as ``plain_block`` writes it.
"""

from __future__ import annotations

import json

import anthropic


class ClaudeCallError(Exception):
    """The call failed; the message says why, in words for the user."""


def create_message(client, *, task: str, **kwargs):
    """``client.messages.create(**kwargs)``; ``task`` names what was asked ("summarise this document")."""
    try:
        response = client.messages.create(**kwargs)
    except anthropic.APIStatusError as exc:
        raise ClaudeCallError(f"Claude answered HTTP {exc.status_code}: {_api_message(exc)}") from exc
    except anthropic.APIError as exc:  # connection errors and timeouts, after the SDK's retries
        reraise_interruption(exc)  # Celery's time limit, landed in the HTTP wait, goes to the task
        raise ClaudeCallError(f"Claude could not be reached: {exc}") from exc
    if response.stop_reason == "refusal":
        raise ClaudeCallError(f"Claude declined to {task}.")
    if response.stop_reason == "model_context_window_exceeded":
        raise ClaudeCallError("The document context did not fit Claude's context window.")
    return response


def _api_message(exc) -> str:
    body = exc.body if isinstance(getattr(exc, "body", None), dict) else {}
    return (body.get("error") or {}).get("message") or str(exc)


def reraise_interruption(exc: BaseException) -> None:
    """Re-raise an interruption the SDK wrapped as a connection error: Celery's soft time limit is
    raised inside whatever runs, most often the HTTP wait, and must reach the task, which resumes."""
    seen = exc.__cause__ or exc.__context__
    while seen is not None:
        if type(seen).__name__ == "SoftTimeLimitExceeded":
            raise seen
        seen = seen.__cause__ or seen.__context__


def plain_block(block) -> dict:
    """An SDK content block as the plain dict the API accepts back in ``messages`` (a tool input always
    an object: ``tool_input``)."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": tool_input(block.input)}
    return block.model_dump(mode="json", exclude_none=True)


def tool_input(value) -> dict:
    """A tool_use block's ``input`` as an object. The SDK can hand it back as a string, the model's JSON
    (anthropic-sdk-python#804): parsed when it is a whole object, else ``{}`` (the checks then say which
    fields are missing). Sent back as a string it would make the API refuse every later turn
    ("tool_use.input: Input should be a valid dictionary")."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}
