"""CASE_FACTS: the facts of the case, pinned in every system prompt, never compacted.

Rendered deterministically (fixed key order, one ``key: value`` line each,
decisions as ``- `` lines, extra facts sorted by key) and verbatim: a value is
written exactly as given ("$247.83" stays "$247.83"). Only a value that would
break the line format (newline, edge whitespace, a leading quote, empty, or
the word ``null``) is written as a JSON string; ``None`` is written ``null``.
``parse_case_facts`` reads the block back to a dict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

SCHEMA = "CASE_FACTS v1"
_OPEN = f'<case_facts schema="{SCHEMA}">'
_CLOSE = "</case_facts>"
_FIELDS = ("doc_id", "doc_type", "extracted_count", "last_clause_id", "policy_cap")


@dataclass(frozen=True)
class CaseFacts:
    doc_id: str
    doc_type: str | None = None
    extracted_count: int = 0
    last_clause_id: str | None = None
    policy_cap: str | None = None
    decisions: tuple[str, ...] = ()
    extra: tuple[tuple[str, str], ...] = field(default=())  # engagement policy facts, (key, value)

    def record_extraction(self, clause_id: str) -> CaseFacts:
        return replace(self, extracted_count=self.extracted_count + 1, last_clause_id=clause_id)

    def with_decision(self, decision: str) -> CaseFacts:
        return replace(self, decisions=self.decisions + (decision,))

    def with_extra(self, key: str, value: str) -> CaseFacts:
        kept = tuple((k, v) for k, v in self.extra if k != key)
        return replace(self, extra=kept + ((key, value),))


def _value(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return json.dumps(v)
    if isinstance(v, int):
        return str(v)
    s = str(v)
    if (
        not s
        or s != s.strip()
        or "\n" in s
        or "\r" in s
        or s.startswith('"')
        or s == "null"
        or any(ord(c) < 32 for c in s)
        or _CLOSE in s
    ):
        return json.dumps(s, ensure_ascii=False).replace(_CLOSE, "<\\/case_facts>")  # JSON reads "\/" as "/"
    return s


def usable_key(k: str) -> bool:
    """Whether ``k`` (stripped) can name an extra fact: one ``key: value`` line that reads back as
    itself, not a fixed field, not ``decisions``, not a ``- `` decision line."""
    return (
        bool(k)
        and not any(c in k for c in ":\n\r")
        and not k.startswith("-")
        and k not in _FIELDS
        and k != "decisions"
    )


def _key(k: str) -> str:
    k = str(k).strip()
    if not usable_key(k):
        raise ValueError(f"bad case-facts key {k!r}")
    return k


def render_case_facts(facts: CaseFacts) -> str:
    """The CASE_FACTS block (deterministic; same facts, same bytes)."""
    lines = [_OPEN]
    for name in _FIELDS:
        lines.append(f"{name}: {_value(getattr(facts, name))}")
    for k, v in sorted(facts.extra, key=lambda kv: kv[0]):
        lines.append(f"{_key(k)}: {_value(v)}")
    lines.append("decisions:" if facts.decisions else "decisions: []")
    lines.extend(f"- {_value(d)}" for d in facts.decisions)
    lines.append(_CLOSE)
    return "\n".join(lines)


def _unvalue(s: str):
    if s == "null":
        return None
    if s.startswith('"'):
        return json.loads(s)
    return s


def parse_case_facts(text: str) -> dict:
    """Read a rendered block (found anywhere in ``text``) back to a dict.

    Keys: the fixed fields, ``decisions`` (list) and any extra facts; ``schema``
    carries the version string. Raises ValueError if no block is present.
    """
    start = text.find(_OPEN)
    end = text.find(_CLOSE, start + 1)
    if start < 0 or end < 0:
        raise ValueError("no CASE_FACTS block")
    out: dict = {"schema": SCHEMA, "decisions": []}
    for line in text[start + len(_OPEN) : end].split("\n"):
        if not line:
            continue
        if line.startswith("- "):
            out["decisions"].append(_unvalue(line[2:]))
            continue
        key, _, value = line.partition(": ")
        if key in ("decisions", "decisions:"):
            continue
        out[key] = _unvalue(value)
    if isinstance(out.get("extracted_count"), str) and out["extracted_count"].isdigit():
        out["extracted_count"] = int(out["extracted_count"])
    return out
