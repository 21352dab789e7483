"""The engine interface: one ``Engine`` per run, one ``EngineSession`` per (run, document).

A session answers clause questions one after another (``extract``) and can be
snapshotted (``snapshot``) into a checkpoint and reopened from one, so a fresh
session resumes where the last one stopped. Engines verify every citation with
``extraction.verify`` before they report a clause found.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from extraction.agent.case_facts import CaseFacts
from extraction.catalog import ClauseType
from extraction.docview import DocumentView, ScoredChunk
from extraction.usage import Usage
from extraction.verify import VerificationResult
from ingest.chunker import ChunkSpec

FOUND, NOT_FOUND, UNVERIFIED, FAILED = "found", "not_found", "unverified", "failed"

FactsProvider = Callable[[], CaseFacts]
Search = Callable[[str, int], Sequence["ChunkSpec | ScoredChunk"]]
CheckpointHook = Callable[[dict, str], None]  # (snapshot, reason)


class EngineError(Exception):
    """A clause could not be processed (API error after retries, refusal...): the task fails with this
    text."""


class TransientEngineError(EngineError):
    """The API was overloaded, rate limited, failing on its side or unreachable, and the SDK's own
    retries (seconds) ran out: worth trying again minutes later, not a verdict on the clause."""


class Interrupted(Exception):
    """The session stopped mid-clause (``stop_reason: max_tokens``) after writing a checkpoint;
    open a fresh session from that checkpoint to go on."""


@dataclass
class ClauseOutcome:
    clause_type: str
    clause_id: str
    status: str  # found | not_found | unverified | failed
    tool_input: dict | None = None  # the answer recorded (``tool_schemas.validate_extract_clause``)
    verification: VerificationResult | None = None
    errors: list[str] = field(default_factory=list)
    turns: int = 0
    detail: dict = field(default_factory=dict)  # engine-specific (offline scores, stop reasons)
    refused_attempts: list[dict] = field(default_factory=list)  # ``refused_attempt`` records, oldest first

    @property
    def clause_text(self) -> str:
        return (self.tool_input or {}).get("clause_text", "") if self.status != NOT_FOUND else "not_found"


def refused_attempt(attempt: int, call: int | None, data: object, errors: Sequence[str]) -> dict:
    """What the audit trail keeps of an answer the server refused (JSON): its attempt (and call, when one
    reply held several), the clause text and the citations as the engine gave them, and the errors."""
    given = data if isinstance(data, dict) else {}
    cits = given.get("citations")
    return {
        "attempt": attempt,
        "call": call,
        "clause_text": given.get("clause_text") if isinstance(given.get("clause_text"), str) else "",
        "citations": [
            {key: c.get(key) for key in ("chunk_id", "page", "quote") if isinstance(c.get(key), (str, int))}
            for c in (cits if isinstance(cits, list) else [])
            if isinstance(c, dict)
        ],
        "errors": [str(e) for e in errors],
    }


class EngineSession(Protocol):
    usage: Usage

    def extract(
        self, clause: ClauseType, clause_id: str, retrieved: Sequence[ScoredChunk]
    ) -> ClauseOutcome: ...

    def snapshot(self) -> dict: ...


class Engine(Protocol):
    name: str
    model: str

    def open_session(
        self,
        document: DocumentView,
        *,
        facts: FactsProvider,
        types: Sequence[ClauseType],
        search: Search | None = None,
        snapshot: dict | None = None,
        on_checkpoint: CheckpointHook | None = None,
    ) -> EngineSession: ...


def outcome_from_verification(
    clause: ClauseType, clause_id: str, tool_input: dict, result: VerificationResult, **extra
) -> ClauseOutcome:
    """found / not_found when the verifier accepts, unverified (with its errors) when not."""
    if result.ok:
        status = NOT_FOUND if result.not_found else FOUND
        return ClauseOutcome(clause.name, clause_id, status, tool_input, result, **extra)
    return ClauseOutcome(clause.name, clause_id, UNVERIFIED, tool_input, result, list(result.errors), **extra)
