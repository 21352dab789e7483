"""The agent loop: one conversation per (run, document), one clause question after another.

Each turn the system prompt is rebuilt: the cached invariant prefix (instructions,
catalog, skill list; ``cache_control: ephemeral``), then CASE_FACTS fresh from the
``facts`` provider (the database), then a turn note (tokens used/available, chunks
read, the current question). The history below may be compacted at 80% of the
window; compacted turns stay readable through ``read_history``, and the current question stays
live. A new clause question also starts by compacting the earlier questions' turns (their answers
are in CASE_FACTS):
re-sending every earlier question's context made a contract's input tokens grow with the
square of its clause types (``bench.bench_extraction``, section ``cost``).

Tools: ``search_document``, ``read_chunk``, ``regex_document``, ``load_skill``,
``read_history`` (see ``agent_tools``) and the two answer tools that end a clause:
``extract_clause`` (a clause found, with citations) and ``report_not_found``. Every turn
uses ``tool_choice: any``: the API forces one named tool or any tool, and the answer is
one of two. On the last allowed turn, a retry after a failed verification and a nudge
after a text-only reply, the turn note asks for the answer now; a tool called instead
still gets its result, within ``max_turns + 2`` turns. The tools stay the same from turn
to turn (they head the cached prefix, and the history holds calls of every one of them);
a single-shot agent (``max_turns=1``, the batch path) is given the two answer tools only.

Every answer is validated (``tool_schemas.answer_of``) and a clause found has its
citations verified by the server.
A rejected answer gets one retry with the verifier's errors as the tool result;
a second rejection is recorded ``unverified`` with those errors (flagged). One reply
is one attempt, however many answer calls it holds: each rejected call
gets its own errors back, and the first that passes is recorded. Every refused call is kept
on the clause's outcome (``ClauseOutcome.refused_attempts``) for the audit trail.

stop_reason: ``tool_use`` runs the tools; ``end_turn``/``stop_sequence`` (text only)
gets one nudge; ``pause_turn`` sends the turn back to continue; ``max_tokens``
doubles the output budget of that clause (the next clause starts at the configured
one), checkpoints and raises ``Interrupted`` (resume in a fresh session);
``model_context_window_exceeded`` compacts and retries once (at a question's first
turn, its context goes to a history file too);
``refusal`` fails the clause. HTTP 429/500/529 are retried by the SDK with backoff
(``max_retries``); any other API error fails the clause with its request id.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import cast

import anthropic
from anthropic.types import (
    MessageParam,
    TextBlockParam,
    ToolChoiceAnyParam,
    ToolUnionParam,
)

from extraction.agent import prompts
from extraction.agent.case_facts import CaseFacts
from extraction.agent.claude_call import plain_block, reraise_interruption
from extraction.agent.compaction import (
    CompactionPolicy,
    compact,
    estimate_messages_tokens,
    estimate_tokens,
    should_compact,
)
from extraction.agent.context import ContextPack, turn_note
from extraction.agent.tool_schemas import (
    ANSWER_TOOLS,
    EXTRACT_CLAUSE,
    REPORT_NOT_FOUND,
    all_tools,
    answer_of,
    answer_tools,
)
from extraction.agent.tools import ToolBox
from extraction.catalog import ClauseType
from extraction.docview import DocumentView
from extraction.outcome import (
    FAILED,
    NOT_FOUND,
    UNVERIFIED,
    CheckpointHook,
    ClauseOutcome,
    EngineError,
    FactsProvider,
    Interrupted,
    Search,
    TransientEngineError,
    outcome_from_verification,
    refused_attempt,
)
from extraction.usage import Usage
from extraction.verify import VerificationResult, verify_extraction

log = logging.getLogger(__name__)

MAX_TOKENS_CEILING = 32_000
MAX_PAUSES = 3
DEFAULT_POLICY = CompactionPolicy()
NUDGE = (
    f"Record your answer now: the clause copied verbatim with citations, with the {EXTRACT_CLAUSE} "
    f"tool, or {REPORT_NOT_FOUND} when the document has no such clause."
)
ANSWER_NOW = f" Answer now with {EXTRACT_CLAUSE}, or {REPORT_NOT_FOUND} when the document has no such clause."


def request_timeout(client, max_tokens: int, configured_max_tokens: int) -> float:
    """The client's timeout (``ANTHROPIC_TIMEOUT``), stretched in proportion when a max_tokens stop has
    raised the output budget above the configured one: a 32,000-token answer takes minutes, and
    without the stretch the doubling only bought time-outs."""
    base = client.timeout if isinstance(getattr(client, "timeout", None), (int, float)) else 120.0
    return float(base) * max(1.0, max_tokens / max(1, configured_max_tokens))


@dataclass
class AgentState:
    """What a checkpoint keeps of a conversation (JSON-serialisable)."""

    messages: list[dict] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # compacted history files
    chunks_read: list[str] = field(default_factory=list)
    max_tokens: int = 4096
    turns: int = 0
    current: dict | None = None  # the clause in progress: type, id, attempts, force, turns, errors

    def snapshot(self) -> dict:
        return {
            "history": list(self.messages),
            "position": {
                "current": self.current,
                "turns": self.turns,
                "max_tokens": self.max_tokens,
                "chunks_read": list(self.chunks_read),
                "history_files": dict(self.files),
            },
        }

    @classmethod
    def from_snapshot(cls, snap: dict | None, *, max_tokens: int) -> AgentState:
        if not snap:
            return cls(max_tokens=max_tokens)
        pos = snap.get("position") or {}
        return cls(
            messages=list(snap.get("history") or []),
            files=dict(pos.get("history_files") or {}),
            chunks_read=list(pos.get("chunks_read") or []),
            max_tokens=max(int(pos.get("max_tokens") or max_tokens), max_tokens),
            turns=int(pos.get("turns") or 0),
            current=pos.get("current"),
        )


@dataclass
class Rejection:
    """An answer call (extract_clause, report_not_found) that validation or verification refused."""

    use_id: str
    data: dict
    verification: VerificationResult | None
    feedback: str  # the errors, as the tool result tells the model


def rejection_text(feedback: str, other_recorded: bool, attempts: int) -> str:
    """The tool result of a rejected answer call: its errors and what happens next."""
    if other_recorded:
        return feedback + "\nNot recorded: another answer of this turn was."
    if attempts >= 2:
        return "Recorded as UNVERIFIED and flagged for a reviewer:\n" + feedback
    return feedback + f"\nThis is your one retry: answer again ({EXTRACT_CLAUSE} or {REPORT_NOT_FOUND})."


class Agent:
    def __init__(
        self,
        client: anthropic.Anthropic,
        *,
        model: str,
        document: DocumentView,
        facts: FactsProvider,
        types: Sequence[ClauseType],
        search: Search | None = None,
        skills: Sequence[tuple[str, str]] = (),
        skill_for: Callable[[str], str | None] | None = None,
        max_tokens: int = 4096,
        max_turns: int = 8,
        policy: CompactionPolicy = DEFAULT_POLICY,
        state: AgentState | None = None,
        on_checkpoint: CheckpointHook | None = None,
    ):
        self.client = client
        self.model = model
        self.document = document
        self.facts = facts
        self.types = list(types)
        self.type_names = [t.name for t in self.types]
        self.skills = list(skills)
        self.skill_for = skill_for or (lambda name: None)
        self.max_turns = max(1, max_turns)
        self.policy = policy
        self.state = state or AgentState(max_tokens=max_tokens)
        self.max_tokens = max_tokens  # as configured; the state's grows after a max_tokens stop
        self.on_checkpoint = on_checkpoint
        self.usage = Usage()
        self.tools = (
            all_tools([n for n, _ in self.skills], self.type_names)
            if self.max_turns > 1
            else answer_tools(self.type_names)
        )
        self.tool_tokens = estimate_tokens(json.dumps(self.tools))  # every request carries them
        self.toolbox = ToolBox(document, search, self.state.files, self.state.chunks_read)
        self.last_system: list[dict] = []
        self.compactions = 0

    # ------------------------------------------------------------------ public
    def run_clause(self, clause: ClauseType, clause_id: str, context: ContextPack | str) -> ClauseOutcome:
        st = self.state
        if not (st.current and st.current.get("clause_type") == clause.name):
            st.current = {
                "clause_type": clause.name,
                "clause_id": clause_id,
                "attempts": 0,
                "force": self.max_turns <= 1,
                "turns": 0,
                "nudges": 0,
                "pauses": 0,
                "errors": [],
                "ctx_retry": False,
                "refused": [],
            }
            st.max_tokens = self.max_tokens  # a max_tokens stop raises the budget of its own clause only
            if (
                self.policy.per_question and len(st.messages) > 2
            ):  # earlier questions' turns, but the last answer
                self._compact(everything=True)
            question = prompts.clause_question(clause, clause_id, context, skill=self.skill_for(clause.name))
            if isinstance(context, ContextPack):
                self.toolbox.note_read(context.chunk_ids)
            self._append_user(question["content"])
        cur = st.current
        while True:
            if cur["turns"] >= self.max_turns + 2:
                return self._finish(FAILED, errors=[f"no answer after {cur['turns']} turns"])
            force = cur["force"] or cur["turns"] >= self.max_turns - 1
            self._maybe_compact()
            response = self._call(force)
            cur["turns"] += 1
            st.turns += 1
            self.usage.add(response.usage)
            outcome = self._handle(response, clause, cur)
            if outcome is not None:
                return outcome

    def snapshot(self) -> dict:
        return self.state.snapshot()

    # ------------------------------------------------------------------ one response
    def _handle(self, response, clause: ClauseType, cur: dict) -> ClauseOutcome | None:
        """One response to the clause in progress, ``cur`` (``state.current``)."""
        st = self.state
        reason = response.stop_reason
        content = [plain_block(b) for b in response.content]
        if reason == "max_tokens":
            if st.max_tokens >= MAX_TOKENS_CEILING:
                return self._finish(
                    FAILED, errors=[f"the answer did not fit in {st.max_tokens} output tokens"]
                )
            st.max_tokens = min(st.max_tokens * 2, MAX_TOKENS_CEILING)
            self._checkpoint("max_tokens")
            raise Interrupted(
                f"stop_reason max_tokens on {clause.name}; checkpointed, resume with "
                f"max_tokens={st.max_tokens}"
            )
        if reason == "model_context_window_exceeded":  # make room, then retry once
            if cur["ctx_retry"] or not self._make_room(first_turn=cur["turns"] == 1):
                return self._finish(FAILED, errors=["the conversation exceeded the model's context window"])
            cur["ctx_retry"] = True
            return None
        if reason == "refusal":
            return self._finish(FAILED, errors=["the model declined to answer (stop_reason refusal)"])
        if reason == "pause_turn":
            cur["pauses"] += 1
            if cur["pauses"] > MAX_PAUSES:
                return self._finish(FAILED, errors=["the model paused its turn too many times"])
            if content:
                st.messages.append({"role": "assistant", "content": content})
            return None
        if content:
            st.messages.append({"role": "assistant", "content": content})
        uses = [b for b in content if b.get("type") == "tool_use"]
        if not uses:  # end_turn / stop_sequence with text only
            if cur["nudges"] >= 1:
                return self._finish(FAILED, errors=["the model ended its turn without answering"])
            cur["nudges"] += 1
            cur["force"] = True
            self._append_user([{"type": "text", "text": NUDGE}])
            return None
        extracts = [u for u in uses if u["name"] in ANSWER_TOOLS]
        if extracts:  # one reply is one attempt, however many answer calls it holds
            cur["attempts"] += 1
        results: dict[str, dict] = {}
        rejected: list[Rejection] = []
        outcome: ClauseOutcome | None = None
        for n, use in enumerate(extracts, 1):
            if outcome is not None:
                results[use["id"]] = self._result(use["id"], "Ignored: one answer per turn.", True)
                continue
            verdict = self._judge(use, clause, cur, call=n if len(extracts) > 1 else None)
            if isinstance(verdict, Rejection):
                rejected.append(verdict)
            else:
                results[use["id"]], outcome = verdict
        for r in rejected:
            results[r.use_id] = self._result(
                r.use_id, rejection_text(r.feedback, outcome is not None, cur["attempts"]), True
            )
        if outcome is None and rejected and cur["attempts"] >= 2:
            kept = next(
                (r for r in rejected if r.verification is not None), rejected[0]
            )  # a verified reading first
            outcome = self._finish(
                outcome=ClauseOutcome(
                    clause.name,
                    cur["clause_id"],
                    UNVERIFIED,
                    kept.data,
                    kept.verification,
                    list(cur["errors"]),
                )
            )
        elif outcome is None and rejected:
            cur["force"] = True
        for use in uses:  # one tool_result per tool_use, in the reply's order
            if use["name"] not in ANSWER_TOOLS:
                text, is_error = self.toolbox.run(use["name"], use.get("input") or {})
                results[use["id"]] = self._result(use["id"], text, is_error)
        self._append_user([results[use["id"]] for use in uses])
        return outcome

    def _judge(
        self, use: dict, clause: ClauseType, cur: dict, call: int | None = None
    ) -> tuple[dict, ClauseOutcome] | Rejection:
        """Validate and verify one answer call (``extract_clause`` or ``report_not_found``, read into the
        answer it records): (tool_result block, outcome) when it is recorded, else its ``Rejection`` (its
        errors are kept under the attempt, and ``call`` when a reply held several)."""
        data, errors = answer_of(use["name"], use.get("input") or {}, self.type_names)
        if not errors and data.get("clause_type") != clause.name:
            errors.append(
                f'clause_type must be "{clause.name}" for this question (you gave "{data["clause_type"]}")'
            )
        result: VerificationResult | None = None
        if not errors:
            doc = self.document
            result = verify_extraction(
                data["citations"],
                doc.by_id,
                doc.pages,
                data["clause_text"],
                document_text=doc.text,
                furniture=doc.furniture,
            )
            if result.ok:
                outcome = outcome_from_verification(clause, cur["clause_id"], data, result)
                text = (
                    "Recorded: not_found."
                    if outcome.status == NOT_FOUND
                    else f"Recorded and verified ({len(result.citations)} citation(s))."
                )
                return self._result(use["id"], text, False), self._finish(outcome=outcome)
            errors = list(result.errors)
        label = f"attempt {cur['attempts']}" + (f", call {call}" if call else "")
        cur["errors"].extend(f"{label}: {e}" for e in errors)
        cur.setdefault("refused", []).append(refused_attempt(cur["attempts"], call, data, errors))
        feedback = (
            result.feedback()
            if result is not None
            else f"{use['name']} input rejected:\n" + "\n".join(f"- {e}" for e in errors)
        )
        return Rejection(use["id"], data, result, feedback)

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _result(tool_use_id: str, text: str, is_error: bool) -> dict:
        block: dict[str, str | bool] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": text}
        if is_error:
            block["is_error"] = True
        return block

    def _finish(
        self, status: str | None = None, *, errors: Sequence[str] = (), outcome: ClauseOutcome | None = None
    ) -> ClauseOutcome:
        cur = self.state.current or {}
        if outcome is None:
            outcome = ClauseOutcome(
                cur.get("clause_type", ""),
                cur.get("clause_id", ""),
                status or FAILED,
                errors=list(cur.get("errors", [])) + list(errors),
            )
        if outcome.status == FAILED:
            self.drop_unanswered_question()
        outcome.turns = cur.get("turns", 0)
        outcome.refused_attempts = list(cur.get("refused", []))
        self.state.current = None
        return outcome

    def drop_unanswered_question(self) -> None:
        """Take the current question out of the conversation when nothing answered it (a refusal or an
        API error at its first turn): left as the last user message, the next question would be added
        to it, and the model asked both at once (and the refused text sent again)."""
        cur, msgs = self.state.current or {}, self.state.messages
        if not cur or not msgs or msgs[-1].get("role") != "user" or not isinstance(msgs[-1]["content"], list):
            return
        mark = f"clause_id: {cur.get('clause_id')}\nQuestion:"
        blocks = msgs[-1]["content"]
        at = next((i for i, b in enumerate(blocks) if str(b.get("text", "")).startswith(mark)), None)
        if at is None:
            return
        if at:
            msgs[-1] = {**msgs[-1], "content": blocks[:at]}
        else:
            msgs.pop()

    def _append_user(self, blocks: list[dict]) -> None:
        """Add blocks to the conversation; merged into a trailing user message (tool results first)."""
        msgs = self.state.messages
        if msgs and msgs[-1].get("role") == "user":
            last = dict(msgs[-1])
            old = (
                last["content"]
                if isinstance(last["content"], list)
                else [{"type": "text", "text": last["content"]}]
            )
            last["content"] = old + list(blocks)
            msgs[-1] = last
        else:
            msgs.append({"role": "user", "content": list(blocks)})

    def _note(self, system_tokens: int, force: bool) -> str:
        used = system_tokens + estimate_messages_tokens(self.state.messages)
        available = max(0, self.policy.window_tokens - used)
        cur = self.state.current or {}
        note = turn_note(used, available, self.state.chunks_read)
        clause = next((t for t in self.types if t.name == cur.get("clause_type")), None)
        ask = prompts.asking(clause) if clause is not None else f"find the {cur.get('clause_type')} clause"
        note += (
            f"\nCurrent question: clause_id {cur.get('clause_id')}: {ask} "
            f"(turn {cur.get('turns', 0) + 1} of at most {self.max_turns})."
        )
        if force:
            note += ANSWER_NOW
        return note

    def system(self, force: bool = False) -> list[dict]:
        facts: CaseFacts = self.facts()
        base = prompts.build_system(facts, types=self.types, skills=self.skills)
        size = estimate_tokens("".join(b["text"] for b in base)) + self.tool_tokens
        return prompts.build_system(
            facts, types=self.types, skills=self.skills, turn_note=self._note(size, force)
        )

    def _system_tokens(self) -> int:
        """The system prompt's tokens and the tools' (what every request carries besides the messages)."""
        system = estimate_tokens("".join(b["text"] for b in self.last_system)) if self.last_system else 0
        return system + self.tool_tokens

    def _maybe_compact(self) -> None:
        if should_compact(self.state.messages, system_tokens=self._system_tokens(), policy=self.policy):
            self._compact()

    def _compact(self, everything: bool = False) -> bool:
        """Compact the oldest turns now (with ``everything``, all but the turns a cut may not split)."""
        policy = replace(self.policy, keep_last=0, target=0.0) if everything else self.policy
        result = compact(
            self.state.messages, system_tokens=self._system_tokens(), policy=policy, pinned=self._is_question
        )
        if result is None:
            return False
        self.state.messages[:] = result.messages
        self.state.files[result.archive_name] = result.archive_text
        self.compactions += 1
        log.info(
            "compacted %d messages into %s (%d -> %d tokens)",
            result.compacted_messages,
            result.archive_name,
            result.tokens_before,
            result.tokens_after,
        )
        return True

    def _is_question(self, block: dict) -> bool:
        """Whether ``block`` is the current question's text: compaction keeps it live."""
        cur = self.state.current
        return cur is not None and str(block.get("text", "")).startswith(
            prompts.question_mark(cur["clause_id"])
        )

    def _make_room(self, first_turn: bool) -> bool:
        """Room in the window after a ``model_context_window_exceeded`` stop; False when none was made.
        The oldest turns are compacted (every earlier one at a question's first turn); the question's own
        context goes to a history file at its first turn, where it is what filled the window, or when
        nothing else could be compacted."""
        before = estimate_messages_tokens(self.state.messages)
        self._compact(everything=first_turn)
        if first_turn or estimate_messages_tokens(self.state.messages) >= before:
            self._archive_question_context()
        return estimate_messages_tokens(self.state.messages) < before

    def _archive_question_context(self) -> None:
        """The current question's context, moved whole to a history file (``prompts.without_context``)."""
        msgs, cur = self.state.messages, self.state.current or {}
        name = f"history/context-{str(cur.get('clause_id')).replace(':', '-')}.md"
        for j, m in enumerate(msgs):
            blocks: list = (
                m["content"] if m.get("role") == "user" and isinstance(m.get("content"), list) else []
            )
            for i, b in enumerate(blocks):
                short = prompts.without_context(b["text"], name) if self._is_question(b) else None
                if short is not None:
                    self.state.files[name] = b["text"]
                    msgs[j] = {**m, "content": [*blocks[:i], {**b, "text": short}, *blocks[i + 1 :]]}
                    return

    def _call(self, force: bool):
        self.last_system = self.system(force)
        choice = ToolChoiceAnyParam(type="any")  # forcing is the turn note's (the module's docstring)
        try:  # the blocks are plain dicts in the SDK's TypedDict shapes
            return self.client.messages.create(
                model=self.model,
                max_tokens=self.state.max_tokens,
                system=cast("list[TextBlockParam]", self.last_system),
                messages=cast("list[MessageParam]", self.state.messages),
                tools=cast("list[ToolUnionParam]", self.tools),
                tool_choice=choice,
                timeout=request_timeout(self.client, self.state.max_tokens, self.max_tokens),
            )
        except anthropic.APIStatusError as exc:
            body = exc.body if isinstance(exc.body, dict) else {}
            err = body.get("error") or {}
            kind = TransientEngineError if exc.status_code == 429 or exc.status_code >= 500 else EngineError
            raise kind(
                f"Anthropic API error {exc.status_code} {err.get('type', '')}: "
                f"{err.get('message', exc.message)} (request-id {exc.request_id})"
            ) from exc
        except anthropic.APIConnectionError as exc:
            reraise_interruption(exc)
            raise TransientEngineError(f"Anthropic API unreachable: {exc}") from exc

    def _checkpoint(self, reason: str) -> None:
        if self.on_checkpoint is not None:
            self.on_checkpoint(self.snapshot(), reason)
