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
  compaction can never lose them; the exact values (money, percentages, dates, ids,
  numbers with their unit) seen in the compacted turns are also listed verbatim in the
  summary, the latest ``VALUES_SHOWN`` of them: not chunk ids, offsets or section numbers;
- the summary heads every later request, so it stays short: the earlier history files
  as a range, the latest ``CHUNKS_SHOWN`` chunks read, then the digest;
- a block ``pinned`` says must stay live (the current question) is carried into the
  new history right after the summary when its message is compacted.

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
_ARCHIVE_RE = re.compile(r"history/compacted-(\d{3})\.md")
_CHUNK_RE = re.compile(r"chunk:([^\s|\]]+)")
# No exact value of the contract: provenance tags, clause ids, history file names, hex runs (chunk ids).
_NOT_VALUES = re.compile(
    r"\[source:[^\]]*\]|clause_id\"?:\s*\"?[^\s\",}]+|history/compacted-\d{3}\.md|\b(?=[0-9a-f]*\d)[0-9a-f]{12,}\b"
)
_BARE_NUMBER = re.compile(r"[-+]?[\d.,]+")
VALUES_SHOWN = 20  # the summary's exact values, the latest (docs/decisions.md)
CHUNKS_SHOWN = 8  # the summary's chunks read, the latest; the turn note lists more (docs/decisions.md)


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
    pinned: Callable[[dict], bool] | None = None,
) -> Compaction | None:
    """Compact the oldest turns now. None if there is no safe cut that compacts anything.

    The cut is the earliest safe point that brings the history to ``target`` of the
    window (estimated locally), else the latest safe point that keeps ``keep_last``.
    ``summarize`` (optional, e.g. an LLM call made by the caller) replaces the
    built-in deterministic digest. A compacted text block that ``pinned`` accepts stays in
    the new history, right after the summary (it is in the history file too).
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
    keep = [b for m in old for b in _blocks(m) if pinned and b.get("type") == "text" and pinned(b)]
    new = _prepend([{"type": "text", "text": summary}, *keep], kept)
    return Compaction(new, name, archive, summary, len(old), before, count_tokens(new))


# --------------------------------------------------------------------------- rendering


def _archive_numbers(old: Sequence[Message]) -> list[int]:
    """The numbers of the history files the summaries in ``old`` name, in order."""
    found = {
        int(n)
        for m in old
        for b in _blocks(m)
        if b.get("type") == "text" and SUMMARY_MARKER in b.get("text", "")
        for n in _ARCHIVE_RE.findall(b["text"])
    }
    return sorted(found)


def _next_archive_number(old: Sequence[Message]) -> int:
    return max(_archive_numbers(old), default=0) + 1


def _prepend(head: list[dict], kept: list[Message]) -> list[Message]:
    if kept and kept[0].get("role") == "user":
        first = dict(kept[0])
        first["content"] = head + _blocks(kept[0])
        return [first] + kept[1:]
    return [{"role": "user", "content": head}] + kept


def _short(s: str, n: int) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _summary(
    old: Sequence[Message], name: str, budget: int, summarize: Callable[[Sequence[Message]], str] | None
) -> str:
    # files are numbered in order (``_next_archive_number``): the earlier ones are 001 up to this one's
    earlier = [f"history/compacted-{n:03d}.md" for n in range(1, _next_archive_number(old))]
    turns = [b for m in old for b in _blocks(m) if SUMMARY_MARKER not in str(b.get("text", ""))]
    text = "\n".join(block_text(b) for b in turns)  # these turns only: earlier summaries are in their files
    chunks = list(dict.fromkeys(_CHUNK_RE.findall(text)))
    values = contract_values(text, chunk_ids=chunks + _cited_chunks(turns))[-VALUES_SHOWN:]
    head = [
        f"{SUMMARY_MARKER} {len(old)} earlier messages were compacted to save context.",
        f'Full transcript: history file "{name}" (read it with the read_history tool).',
    ]
    if len(earlier) > 3:
        head.append(f"Earlier history files: {earlier[0]} to {earlier[-1]} ({len(earlier)} files)")
    elif earlier:
        head.append("Earlier history files: " + ", ".join(earlier))
    if chunks:
        shown = (
            f"{len(chunks)}, the latest {CHUNKS_SHOWN}" if len(chunks) > CHUNKS_SHOWN else f"{len(chunks)}"
        )
        head.append(f"Chunks read in these turns ({shown}): " + ", ".join(chunks[-CHUNKS_SHOWN:]))
    if values:
        head.append("Exact values seen (verbatim): " + " | ".join(values))
    digest = summarize(old) if summarize else _digest(old, budget)
    return "\n".join(head + ["Digest:", digest])


def contract_values(text: str, chunk_ids: Sequence[str] = ()) -> list[str]:
    """The exact values of ``text`` worth carrying (money, percentages, dates, ids, numbers with their
    unit), in order: not the ids of chunks or history files, nor a bare number (a section, a page, an
    offset, a paragraph)."""
    ids = [c for c in chunk_ids if c]
    return [
        v
        for v in exact_values(_NOT_VALUES.sub(" ", text))
        if not _BARE_NUMBER.fullmatch(v) and not any(v in c for c in ids)
    ]


def _cited_chunks(blocks: Sequence[dict]) -> list[str]:
    """The chunk ids the tool calls among ``blocks`` named (read_chunk, extract_clause citations)."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "chunk_id" and isinstance(item, str):
                    found.append(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for b in blocks:
        if b.get("type") == "tool_use":
            walk(b.get("input"))
    return found


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
