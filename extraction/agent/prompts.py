"""Prompt building (Anthropic Messages format).

System prompt = an invariant prefix (instructions, clause catalog, skill list)
marked ``cache_control: ephemeral``, then CASE_FACTS (rebuilt every turn, never
cached, never compacted), then the optional per-turn note. The cached block has
to come first for prompt caching to work (the cache is a prefix), so CASE_FACTS
is pinned directly after it, at the top of the part that changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from extraction import catalog
from extraction.agent.case_facts import CaseFacts, render_case_facts
from extraction.agent.context import ContextPack
from extraction.agent.provenance import parse_blocks
from extraction.catalog import ClauseType

INSTRUCTIONS = """\
You review commercial contracts for auditors. For each question you find one type of clause in ONE document
and record it with the extract_clause tool, backed by citations that the server checks against the source,
or record with the report_not_found tool that the document has no such clause.

How to work:
- The document text is given to you only as blocks headed by provenance tags:
  === §Section [source:FILE | chunk:ID | p.N | ¶N | §Section | @offset] ===
  Cite the chunk id and page from the tag of the block a quote comes from.
- Read before you answer. If the context given with the question is not enough, use search_document,
  regex_document (exact values, section numbers, defined terms) and read_chunk (neighbouring text).
- Load the skill for the clause type with load_skill when one is listed, before answering.

Rules for the answer (the server rejects answers that break them and tells you why):
- Quote verbatim. Each citation's quote is ONE contiguous passage copied character-for-character from the
  chunk: same words, same capitals, same punctuation, whole words and whole numbers. No "...", no joined
  fragments, no edits.
- clause_text is the clause as your quotes give it: their words, in their order, nothing added. Where you
  leave words of a quote out, write "…" in their place.
- Never paraphrase, round or reformat a value. "$247.83" stays "$247.83" (not "about $250"), "thirty (30)
  days" stays "thirty (30) days", ids like "cust_4711" stay exactly as written; every amount, percentage,
  date, id or number in clause_text must appear verbatim in your cited quotes.
- If the document has no such clause, call report_not_found with the question's clause_id and clause_type.
  Do not cite a clause of a different type to have something to show.
- Facts in CASE_FACTS below are authoritative and verbatim; use them as written.
"""


def catalog_text(types: Sequence[ClauseType] = catalog.CATALOG) -> str:
    lines = ["Clause types (name [kind]: description):"]
    lines += [f"- {t.name} [{t.kind}]: {t.description}" for t in types]
    return "\n".join(lines)


def skills_text(skills: Sequence[tuple[str, str]]) -> str:
    if not skills:
        return "Skills: none."
    lines = ["Skills you can load with load_skill (name: description):"]
    lines += [f"- {name}: {desc}" for name, desc in skills]
    return "\n".join(lines)


def system_prefix(
    types: Sequence[ClauseType] = catalog.CATALOG,
    skills: Sequence[tuple[str, str]] = (),
    instructions: str = INSTRUCTIONS,
) -> str:
    """The invariant (cacheable) part of the system prompt."""
    return "\n\n".join([instructions.strip(), catalog_text(types), skills_text(skills)])


def build_system(
    case_facts: CaseFacts | str,
    *,
    types: Sequence[ClauseType] = catalog.CATALOG,
    skills: Sequence[tuple[str, str]] = (),
    turn_note: str | None = None,
    instructions: str = INSTRUCTIONS,
) -> list[dict]:
    """System blocks for ``client.messages.create(system=...)``.

    ``[cached prefix, CASE_FACTS, (turn note)]``; only the first block carries
    ``cache_control``. ``skills`` is ``skill_loader.list_skills()``.
    """
    facts = render_case_facts(case_facts) if isinstance(case_facts, CaseFacts) else case_facts
    blocks: list[dict] = [
        {
            "type": "text",
            "text": system_prefix(types, skills, instructions),
            "cache_control": {"type": "ephemeral"},
        },
        {"type": "text", "text": "Case facts (authoritative, verbatim):\n" + facts},
    ]
    if turn_note:
        blocks.append({"type": "text", "text": turn_note})
    return blocks


def _context_text(context: ContextPack | str) -> str:
    return context.text if isinstance(context, ContextPack) else context


CONTEXT_HEAD = "Context (the passages most likely to contain it, in reading order):\n\n"
ANSWER_HEAD = "\n\nAnswer with the extract_clause tool"


def question_mark(clause_id: str) -> str:
    """How the text of the question ``clause_id`` starts: the agent finds its current question by it."""
    return f"clause_id: {clause_id}\nQuestion:"


def asking(clause: ClauseType) -> str:
    """What a question asks, for the turn note: a free question (``catalog.is_question``) as it was asked,
    else to find the clause type."""
    return (
        f"answer “{clause.description}”" if catalog.is_question(clause) else f"find the {clause.name} clause"
    )


def clause_question(
    clause: ClauseType, clause_id: str, context: ContextPack | str, *, skill: str | None = None
) -> dict:
    """The user message for one clause question, with provenance-tagged context. A free question is asked
    as it was written, not as a clause type named after it."""
    skill_line = f'Load the skill "{skill}" first.\n' if skill else ""
    kind_line = (
        "The answer is a short value: quote the sentence or phrase that states it.\n"
        if clause.kind == catalog.VALUE
        else ""
    )
    if catalog.is_question(clause):
        ask = (
            f"{clause.description}\nFind the passage of this document that answers it, and record it with "
            f'clause_type "{clause.name}".\n'
        )
        absent = "if the document does not answer it"
    else:
        ask = f"find the {clause.name} clause in this document.\n{clause.name}: {clause.description}\n"
        absent = "if the document has no such clause"
    text = (
        f"{question_mark(clause_id)} {ask}"
        f"{kind_line}{skill_line}"
        f"{CONTEXT_HEAD}"
        f"{_context_text(context)}"
        f"{ANSWER_HEAD}, echoing the clause_id above. Quote verbatim, never paraphrase "
        f"values; call report_not_found instead {absent}."
    )
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def without_context(question: str, archive: str) -> str | None:
    """The text of a clause question with its context moved out to the history file ``archive`` (when the
    context window cannot hold it): the chunk ids of its passages stay, to be read again. None when the text
    holds no context."""
    start, end = question.find(CONTEXT_HEAD), question.rfind(ANSWER_HEAD)
    if start < 0 or end < start:
        return None
    ids = dict.fromkeys(i for tag, _ in parse_blocks(question[start:end]) for i in tag.chunk_ids)
    chunks = f"; its passages are chunks {', '.join(ids)}, readable with read_chunk" if ids else ""
    note = f'Context: moved to the history file "{archive}" to fit the context window'
    note += f" (read it with read_history{chunks})."
    return question[:start] + note + question[end:]


SUMMARY_SYSTEM = (
    "You summarise commercial contracts for financial auditors. Use only the document you are "
    'given. Write one point per line, each line starting with "- ", at most ten points. Copy '
    "every amount, date, percentage and identifier exactly as the document writes it: never round, "
    "convert or reformat a value. Do not write anything before or after the points."
)


def summary_question(context: ContextPack | str) -> dict:
    """User message asking for the case summary of a document (``extraction.summary``)."""
    text = (
        "Summarise this contract for an auditor in at most ten bullet points: parties, subject, term, money "
        "terms, notable risks. Copy every value (amounts, dates, ids) verbatim.\n\n"
        f"Document (provenance-tagged):\n\n{_context_text(context)}"
    )
    return {"role": "user", "content": [{"type": "text", "text": text}]}


DOC_TYPE_SYSTEM = (
    "You classify commercial contracts for financial auditors. Use only the document you are given. "
    "Answer with the classify_document tool: the listed type that fits the contract best, and a "
    "short passage copied exactly from the document that shows it."
)


def doc_type_question(context: ContextPack | str) -> dict:
    """User message asking for a document's contract type (``extraction.doc_type``)."""
    text = (
        "What type of contract is this? Choose from the tool's list; the title or the sentence that names "
        f"the agreement usually tells.\n\nDocument (provenance-tagged):\n\n{_context_text(context)}"
    )
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def rejected_results(feedback: dict[str, str]) -> dict:
    """User message answering every rejected call of a reply (tool_use id -> why), one tool_result each."""
    return {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": tool_use_id, "is_error": True, "content": text}
            for tool_use_id, text in feedback.items()
        ],
    }
