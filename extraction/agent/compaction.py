"""Compaction policy for the agent's message history (Anthropic messages format).

When the history passes ``trigger`` (80%) of the model window, the oldest turns
are replaced by one summary block and written out, whole, as a "virtual file"
(``Compaction.archive_text``, named ``archive_name``) that the caller stores and
the agent can read back with the ``read_history`` tool.

Rules:
- a ``tool_use`` is never separated from its ``tool_result`` (the cut is made only
  where no kept ``tool_result`` answers a compacted ``tool_use``);
- the last ``keep_last`` messages are always kept;
- CASE_FACTS are not in the history at all (they live in the system prompt), so
  compaction can never lose them; exact values seen in compacted turns are also
  listed verbatim in the summary.

Token counts: ``estimate_tokens`` is a local estimate (chars / 3.5); ``should_compact``
and ``compact`` take any other ``TokenCounter`` (``messages -> int``) in its place.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from extraction.verify import exact_values

Message = dict[str, Any]
TokenCounter = Callable[[Sequence[Message]], int]

SUMMARY_MARKER = "[compacted history]"
CHARS_PER_TOKEN = 3.5
_ARCHIVE_RE = re.compile(r"history/compacted-\d{3}\.md")
_CHUNK_RE = re.compile(r"chunk:([^\s|\]]+)")


# --------------------------------------------------------------------------- token counting


def _blocks(message: Message) -> list[dict]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b if isinstance(b, dict) else {"type": "text", "text": str(b)} for b in content or []]


def block_text(block: dict) -> str:
    """Plain text of one content block (tool inputs as JSON, tool results flattened)."""
    kind = block.get("type")
    if kind == "text":
        return block.get("text", "")
    if kind == "tool_use":
        return (
            f"{block.get('name', '')} "
            f"{json.dumps(block.get('input', {}), ensure_ascii=False, sort_keys=True)}"
        )
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, list):
            return "\n".join(block_text(b) if isinstance(b, dict) else str(b) for b in content)
        return str(content)
    return json.dumps(block, ensure_ascii=False, sort_keys=True, default=str)


def estimate_tokens(text: str) -> int:
    """Local token estimate for a string: ceil(chars / 3.5)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_message_tokens(message: Message) -> int:
    return 4 + sum(3 + estimate_tokens(block_text(b)) for b in _blocks(message))


def estimate_messages_tokens(messages: Sequence[Message]) -> int:
    """The default ``TokenCounter``."""
    return sum(estimate_message_tokens(m) for m in messages)


# --------------------------------------------------------------------------- policy


@dataclass(frozen=True)
class CompactionPolicy:
    window_tokens: int = 200_000
    trigger: float = 0.8  # compact when history + system passes this share of the window
    target: float = 0.5  # ...down to about this share
    keep_last: int = 4  # never compact the most recent messages
    digest_chars: int = 6_000  # budget of the digest inside the summary
    per_question: bool = True  # a new clause question starts with the earlier questions' turns compacted


@dataclass(frozen=True)
class Compaction:
    messages: list[Message]  # the new history: summary first, then the kept turns
    archive_name: str  # e.g. "history/compacted-001.md"
    archive_text: str  # the full compacted turns, readable; the caller stores it
    summary: str
    compacted_messages: int
    tokens_before: int
    tokens_after: int


def should_compact(
    messages: Sequence[Message],
    *,
    system_tokens: int = 0,
    policy: CompactionPolicy = CompactionPolicy(),
    count_tokens: TokenCounter = estimate_messages_tokens,
) -> bool:
    return system_tokens + count_tokens(messages) > policy.trigger * policy.window_tokens


def safe_cut_points(messages: Sequence[Message]) -> list[int]:
    """Indices ``i`` (1..len-1) where ``messages[:i]`` can be compacted without splitting a
    tool_use from its tool_result."""
    use_at: dict[str, int] = {}
    for i, m in enumerate(messages):
        for b in _blocks(m):
            if b.get("type") == "tool_use" and b.get("id"):
                use_at[b["id"]] = i
    # latest index of a tool_use whose result is at j: cuts in (use, j] are unsafe
    unsafe: set[int] = set()
    for j, m in enumerate(messages):
        for b in _blocks(m):
            if b.get("type") == "tool_result":
                u = use_at.get(b.get("tool_use_id", ""))
                if u is not None and u < j:
                    unsafe.update(range(u + 1, j + 1))
    return [i for i in range(1, len(messages)) if i not in unsafe]


def compact(
    messages: Sequence[Message],
    *,
    system_tokens: int = 0,
    policy: CompactionPolicy = CompactionPolicy(),
    count_tokens: TokenCounter = estimate_messages_tokens,
    summarize: Callable[[Sequence[Message]], str] | None = None,
) -> Compaction | None:
    """Compact the oldest turns now. None if there is no safe cut that compacts anything.

    The cut is the earliest safe point that brings the history to ``target`` of the
    window (estimated locally), else the latest safe point that keeps ``keep_last``.
    ``summarize`` (optional, e.g. an LLM call made by the caller) replaces the
    built-in deterministic digest.
    """
    messages = list(messages)
    before = count_tokens(messages)
    cuts = [
        i for i in safe_cut_points(messages) if len(messages) - i >= min(policy.keep_last, len(messages) - 1)
    ]
    if not cuts:
        return None
    per = [estimate_message_tokens(m) for m in messages]
    budget = policy.target * policy.window_tokens - system_tokens - policy.digest_chars / CHARS_PER_TOKEN
    cut = next((i for i in cuts if sum(per[i:]) <= budget), cuts[-1])
    old, kept = messages[:cut], messages[cut:]
    n = _next_archive_number(old)
    name = f"history/compacted-{n:03d}.md"
    archive = render_transcript(old, title=name)
    summary = _summary(old, name, policy.digest_chars, summarize)
    new = _prepend(summary, kept)
    return Compaction(new, name, archive, summary, len(old), before, count_tokens(new))


# --------------------------------------------------------------------------- rendering


def _next_archive_number(old: Sequence[Message]) -> int:
    names = set()
    for m in old:
        for b in _blocks(m):
            if b.get("type") == "text" and SUMMARY_MARKER in b.get("text", ""):
                names.update(_ARCHIVE_RE.findall(b["text"]))
    return len(names) + 1


def _prepend(summary: str, kept: list[Message]) -> list[Message]:
    block = {"type": "text", "text": summary}
    if kept and kept[0].get("role") == "user":
        first = dict(kept[0])
        first["content"] = [block] + _blocks(kept[0])
        return [first] + kept[1:]
    return [{"role": "user", "content": [block]}] + kept


def _short(s: str, n: int) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _summary(
    old: Sequence[Message], name: str, budget: int, summarize: Callable[[Sequence[Message]], str] | None
) -> str:
    earlier = sorted(
        {
            a
            for m in old
            for b in _blocks(m)
            if b.get("type") == "text" and SUMMARY_MARKER in b.get("text", "")
            for a in _ARCHIVE_RE.findall(b["text"])
        }
    )
    text_all = "\n".join(block_text(b) for m in old for b in _blocks(m))
    chunks = list(dict.fromkeys(_CHUNK_RE.findall(text_all)))
    values = exact_values(text_all)[:60]
    head = [
        f"{SUMMARY_MARKER} {len(old)} earlier messages were compacted to save context.",
        f'Full transcript: history file "{name}" (read it with the read_history tool).',
    ]
    if earlier:
        head.append("Earlier history files: " + ", ".join(earlier))
    if chunks:
        head.append("Chunks read in the compacted turns: " + ", ".join(chunks[:80]))
    if values:
        head.append("Exact values seen (verbatim): " + " | ".join(values))
    digest = summarize(old) if summarize else _digest(old, budget)
    return "\n".join(head + ["Digest:", digest])


def _digest(old: Sequence[Message], budget: int) -> str:
    lines: list[str] = []
    for m in old:
        role = m.get("role", "?")
        for b in _blocks(m):
            kind = b.get("type")
            if kind == "text" and SUMMARY_MARKER in b.get("text", ""):
                continue
            if kind == "tool_use":
                lines.append(
                    f"- assistant called {b.get('name')} "
                    f"{_short(json.dumps(b.get('input', {}), ensure_ascii=False, sort_keys=True), 160)}"
                )
            elif kind == "tool_result":
                err = " (error)" if b.get("is_error") else ""
                lines.append(f"- tool result{err}: {_short(block_text(b), 160)}")
            else:
                lines.append(f"- {role}: {_short(block_text(b), 200)}")
    out: list[str] = []
    used = 0
    for line in reversed(lines):  # the most recent compacted turns matter most
        if used + len(line) > budget:
            out.append(f"- ({len(lines) - len(out)} older entries omitted; see the history file)")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(reversed(out))


def render_transcript(messages: Sequence[Message], *, title: str = "history") -> str:
    """The readable full text of ``messages`` (the virtual file content)."""
    parts = [f"# {title}", ""]
    for i, m in enumerate(messages, 1):
        parts.append(f"## [{i}] {m.get('role', '?')}")
        for b in _blocks(m):
            kind = b.get("type")
            if kind == "tool_use":
                parts.append(
                    f"[tool_use id={b.get('id')} name={b.get('name')}] "
                    f"{json.dumps(b.get('input', {}), ensure_ascii=False, sort_keys=True)}"
                )
            elif kind == "tool_result":
                err = " is_error=true" if b.get("is_error") else ""
                parts.append(f"[tool_result for {b.get('tool_use_id')}{err}]")
                parts.append(block_text(b))
            else:
                parts.append(block_text(b))
        parts.append("")
    return "\n".join(parts)


def read_archive(text: str, offset: int = 0, limit: int = 8000) -> str:
    """A page of a stored history file, for the ``read_history`` tool."""
    offset = max(0, int(offset))
    page = text[offset : offset + max(1, int(limit))]
    nxt = offset + len(page)
    tail = (
        f"\n[... {len(text) - nxt} more chars; next offset {nxt}]" if nxt < len(text) else "\n[end of file]"
    )
    return page + tail
