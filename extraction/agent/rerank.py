"""The seed's rerank: a small Claude model picks which K of a clause question's top fused candidates
the question is shown (``CLAUDE_RERANK``; docs/decisions.md, CLAUDE_RERANK).

One Messages call per clause question: the clause (name, description), then a preview of each of the
first ``CLAUDE_RERANK_POOL`` (20) candidates of retrieval's fused ranking, numbered 1..n in that order
and tagged with chunk id, page and section; the ``choose_passages`` tool is forced and thinking is off
(forced tool use does not mix with thinking, and a choice of numbers needs none). The tool's
``passages`` is an array of numbers, each an ``enum`` member of 1..n (a keyword the API takes with or
without ``strict``); the count and "no repeats" are outside the ``strict`` subset, so they are in the
description and in ``check_choice``, which takes an answer only when it names exactly K distinct
numbers in range. Anything else (an HTTP error after one retry, no answer within
``TIMEOUT_S``, a refusal, no tool call, a bad answer) leaves the fused order, logged and counted in
``fallbacks``: the rerank can only narrow what the question is shown, never stop it being asked.

``prompt``, ``choose_tool`` and ``check_choice`` are plain functions over plain data; ``Reranker`` makes
the call and keeps the tokens it cost (``usage``) for the run.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from extraction.agent.claude_call import reraise_interruption, tool_input
from extraction.catalog import ClauseType
from extraction.docview import ScoredChunk
from extraction.usage import Usage

log = logging.getLogger(__name__)

TOOL = "choose_passages"
POOL = 20  # candidates shown (settings.CLAUDE_RERANK_POOL)
PREVIEW_CHARS = 700  # of each candidate, whitespace-normalised, cut at a word
MAX_TOKENS = 256  # an array of at most POOL small numbers
MAX_RETRIES = 1  # the SDK's retries of a 429/500/529 before the fused order is kept
TIMEOUT_S = 30.0
SYSTEM = (
    "You choose passages of a contract for a clause reviewer. You are given a clause type and numbered "
    "previews of passages from one contract. Choose the passages most likely to contain that clause, or "
    "the text that settles whether the contract has it, best first. Answer only with the "
    f"{TOOL} tool."
)


class RerankError(ValueError):
    """The answer cannot be taken (the reason, for the log)."""


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """``text`` on one line, cut at a word before ``limit`` characters ("…" marks the cut)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0] or flat[:limit]
    return cut + " …"


def prompt(clause: ClauseType, candidates: Sequence[ScoredChunk], k: int) -> str:
    """The user turn: the clause, then each candidate's number, chunk id, page, section and preview."""
    lines = [
        f"Clause type: {clause.name}",
        f"What it is: {clause.description}".rstrip(),
        "",
        f"Passages ({len(candidates)}, each a preview of a part of the contract):",
    ]
    for n, sc in enumerate(candidates, 1):
        c = sc.chunk
        pages = f"p. {c.page_start}" if c.page_start == c.page_end else f"pp. {c.page_start}-{c.page_end}"
        section = f", § {' '.join(c.section.split())}" if (c.section or "").strip() else ""
        lines += ["", f"[{n}] chunk {c.chunk_id}, {pages}{section}", preview(c.text)]
    lines += ["", f"Choose exactly {k} different passage numbers, best first, with the {TOOL} tool."]
    return "\n".join(lines)


def choose_tool(n: int, k: int) -> dict:
    """The ``choose_passages`` tool for ``n`` candidates of which ``k`` are kept."""
    return {
        "name": TOOL,
        "description": f"Record the {k} passages to show the reviewer, by their numbers, best first.",
        "input_schema": {
            "type": "object",
            "properties": {
                "passages": {
                    "type": "array",
                    "description": f"Exactly {k} different passage numbers (1 to {n}), best first.",
                    "items": {"type": "integer", "enum": list(range(1, n + 1))},
                }
            },
            "required": ["passages"],
            "additionalProperties": False,
        },
    }


def check_choice(answer: Any, n: int, k: int) -> list[int]:
    """The 0-based candidate indices an answer names, best first; ``RerankError`` unless it names exactly
    ``k`` distinct numbers of 1..``n``."""
    picks = answer.get("passages") if isinstance(answer, dict) else None
    if not isinstance(picks, list) or not all(isinstance(p, int) and not isinstance(p, bool) for p in picks):
        raise RerankError(f"passages is not a list of numbers: {picks!r}"[:200])
    outside = [p for p in picks if not 1 <= p <= n]
    if outside:
        raise RerankError(f"passage numbers out of range 1-{n}: {outside}")
    if len(set(picks)) != len(picks):
        raise RerankError(f"passage numbers repeated: {picks}")
    if len(picks) != k:
        raise RerankError(f"{len(picks)} passages chosen, not {k}")
    return [p - 1 for p in picks]


@dataclass
class Reranker:
    """One per document session. ``choose`` keeps the first ``pool`` candidates it is given."""

    client: Any
    model: str
    pool: int = POOL
    usage: Usage = field(default_factory=Usage)
    calls: int = 0  # questions asked
    fallbacks: int = 0  # of them, answered by the fused order

    def choose(self, clause: ClauseType, candidates: Sequence[ScoredChunk], k: int) -> list[ScoredChunk]:
        """``k`` of ``candidates`` (fused order) as the model chose them; the fused top ``k`` when the
        candidates are no more than ``k`` (nothing to choose, nothing asked) or on any error."""
        shown = list(candidates)[: self.pool]
        if len(shown) <= k:
            return shown
        self.calls += 1
        try:
            picks = self._ask(clause, shown, k)
        except Exception as exc:  # noqa: BLE001 - any failure keeps the fused order
            reraise_interruption(exc)
            if type(exc).__name__ == "SoftTimeLimitExceeded":  # Celery's time limit goes to the task
                raise
            self.fallbacks += 1
            log.warning("rerank of %r kept the fused order: %s", clause.name, exc)
            return shown[:k]
        return [shown[i] for i in picks]

    def _ask(self, clause: ClauseType, shown: list[ScoredChunk], k: int) -> list[int]:
        tool = choose_tool(len(shown), k)
        response = self.client.with_options(max_retries=MAX_RETRIES, timeout=TIMEOUT_S).messages.create(
            model=self.model,
            max_tokens=MAX_TOKENS,
            system=SYSTEM,
            tools=[tool],
            tool_choice={"type": "tool", "name": TOOL},
            thinking={"type": "disabled"},
            messages=[{"role": "user", "content": prompt(clause, shown, k)}],
        )
        self.usage.add(response.usage)  # billed whatever it says
        call = next((b for b in response.content if b.type == "tool_use" and b.name == TOOL), None)
        if call is None:
            raise RerankError(f"no {TOOL} call (stop_reason {response.stop_reason})")
        return check_choice(tool_input(call.input), len(shown), k)
