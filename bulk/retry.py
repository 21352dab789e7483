"""What becomes of a request after a batch. Pure.

A request that came back ``errored``, ``expired`` or ``canceled``, or whose answer
stopped at ``max_tokens``, goes into the next batch with a note saying what went
wrong added to its conversation's last (user) message. A request that fails in
three batches in a row is failed for a person to look at. An answer that arrived
(``succeeded``) resets the count, whatever the agent makes of it next (a
verification retry is the agent's own, bounded, business).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

MAX_FAILURES_IN_ROW = 3
FAILURES = ("errored", "expired", "canceled", "max_tokens")
RETRY, FAIL = "retry", "fail"


@dataclass(frozen=True)
class Decision:
    action: str  # retry | fail
    failures_in_row: int
    note: str  # the text for the request's next message (and the item's error)


def failure_note(
    kind: str, batch_id: str, *, error_type: str = "", error_message: str = "", max_tokens: int | None = None
) -> str:
    """The sentence that goes into the next message of a request that failed in a batch."""
    where = f"in Message Batch {batch_id}" if batch_id else "in the previous batch"
    if kind == "errored":
        what = f"{error_type}: {error_message}".strip(": ") or "an error without a message"
        return (
            f"[batch note] The previous attempt at this question failed {where} with {what}. "
            "Answer the question above."
        )
    if kind == "expired":
        return (
            f"[batch note] The previous attempt at this question expired {where} "
            "(it was not processed within 24 hours). Answer the question above."
        )
    if kind == "canceled":
        return (
            f"[batch note] The previous attempt at this question was canceled {where}. "
            "Answer the question above."
        )
    if kind == "max_tokens":
        budget = f" ({max_tokens} output tokens now)" if max_tokens else ""
        return (
            f"[batch note] Your previous answer {where} stopped at max_tokens "
            "before extract_clause was complete; "
            f"the output budget has been raised{budget}. "
            "Answer directly (extract_clause, or report_not_found) and keep clause_text to the clause "
            "itself."
        )
    raise ValueError(f"not a batch failure: {kind!r}")


def decide(kind: str, failures_before: int, note: str) -> Decision:
    """The next step for a request that failed (``kind`` in FAILURES) after ``failures_before``
    failures in a row."""
    if kind not in FAILURES:
        raise ValueError(f"not a batch failure: {kind!r}")
    n = failures_before + 1
    if n >= MAX_FAILURES_IN_ROW:
        return Decision(FAIL, n, f"failed in {n} batches in a row; last: {note}")
    return Decision(RETRY, n, note)


def add_note(snapshot: dict | None, text: str) -> dict:
    """A copy of an agent snapshot whose conversation ends with ``text`` in its last user message.

    The snapshot's history ends with the user turn that was sent (the question, or tool
    results); the note is appended to it as a text block, after any tool_result blocks
    as the API requires.
    """
    snap = copy.deepcopy(snapshot or {})
    history: list[dict[str, Any]] = snap.setdefault("history", [])
    block = {"type": "text", "text": text}
    if history and history[-1].get("role") == "user":
        content = history[-1].get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        history[-1]["content"] = list(content or []) + [block]
    else:
        history.append({"role": "user", "content": [block]})
    return snap
