"""Tool definitions (Anthropic ``tools`` format) and the validators of the two answer tools.

A clause question ends with one of two tools: ``extract_clause`` records a clause found in the
document, its ``citations`` an array of ``minItems: 1``; ``report_not_found`` records that the
document has no such clause. So the schema itself refuses a found clause without a citation, in a
keyword the API documents: a tool's schema is taken as any JSON Schema draft 2020-12 without
``strict``, but with ``strict: true`` only a subset whose array constraint is "minItems (only values 0
and 1 supported)", and the ``if``/``then``/``else`` this used to take is outside it ("JSON Schema
limitations" of https://platform.claude.com/docs/en/build-with-claude/structured-outputs). The two
answer tools keep to that subset (their other bounds, a page of at least 1 and a non-empty
text, are in their descriptions and in the validators), so ``strict`` can be turned on for them; they
are sent without it, as every other tool.

``validate_extract_clause`` checks a recorded answer in plain Python, so the server never depends on
the model having honoured a schema: a found clause with at least one citation, or the not-found
record (``not_found_record``) a ``report_not_found`` call becomes. ``answer_of`` reads a call of
either tool into that record, with what is wrong with it: ``read_extract_clause`` reads ``citations``
sent as a string holding a JSON array as that array, and a citation's ``page`` sent as digits as that
number; an ``extract_clause`` with ``clause_text`` "not_found" is sent to ``report_not_found``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from extraction import catalog

NOT_FOUND = "not_found"
EXTRACT_CLAUSE = "extract_clause"
REPORT_NOT_FOUND = "report_not_found"
ANSWER_TOOLS = (EXTRACT_CLAUSE, REPORT_NOT_FOUND)  # the calls that end a clause question

_CLAUSE_ID = {"type": "string", "description": "The clause_id given in the question; echo it unchanged."}


def extract_clause_schema(clause_types: Sequence[str] | None = None) -> dict:
    """JSON schema of the ``extract_clause`` input; ``clause_type`` enum = catalog names."""
    types = list(clause_types) if clause_types is not None else catalog.names()
    citation = {
        "type": "object",
        "properties": {
            "chunk_id": {
                "type": "string",
                "description": "Chunk id from the context tag (chunk:...) the quote was read from.",
            },
            "page": {
                "type": "integer",
                "description": "Physical page from the context tag (p.N), 1 or more.",
            },
            "quote": {
                "type": "string",
                "description": "One contiguous passage copied character-for-character from the chunk "
                "(two characters or more).",
            },
        },
        "required": ["chunk_id", "page", "quote"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "clause_id": _CLAUSE_ID,
            "clause_type": {"type": "string", "enum": types},
            "clause_text": {
                "type": "string",
                "description": 'The clause verbatim: the words of its quotes in their order ("…" where '
                "words are left out).",
            },
            "citations": {
                "type": "array",
                "items": citation,
                "minItems": 1,
                "description": "Evidence: at least one citation, one for every part of the clause.",
            },
        },
        "required": ["clause_id", "clause_type", "clause_text", "citations"],
        "additionalProperties": False,
    }


def extract_clause_tool(clause_types: Sequence[str] | None = None) -> dict:
    return {
        "name": EXTRACT_CLAUSE,
        "description": (
            "Record the clause the question asks for, found in the document: its text copied verbatim "
            "with at least one citation (chunk_id, page, verbatim quote) for every part of it. The server "
            "verifies every quote against the source and rejects paraphrased quotes or values. When the "
            "document has no such clause, call report_not_found instead."
        ),
        "input_schema": extract_clause_schema(clause_types),
    }


def report_not_found_schema(clause_types: Sequence[str] | None = None) -> dict:
    """JSON schema of the ``report_not_found`` input: the question it answers, nothing else."""
    types = list(clause_types) if clause_types is not None else catalog.names()
    return {
        "type": "object",
        "properties": {"clause_id": _CLAUSE_ID, "clause_type": {"type": "string", "enum": types}},
        "required": ["clause_id", "clause_type"],
        "additionalProperties": False,
    }


def report_not_found_tool(clause_types: Sequence[str] | None = None) -> dict:
    return {
        "name": REPORT_NOT_FOUND,
        "description": (
            "Record that the document has no clause of the type the question asks for, after reading "
            "what it says (search it when the context given is not enough). Do not cite a clause of "
            "another type instead."
        ),
        "input_schema": report_not_found_schema(clause_types),
    }


def answer_tools(clause_types: Sequence[str] | None = None) -> list[dict]:
    """The two tools that end a clause question, in ``ANSWER_TOOLS`` order."""
    return [extract_clause_tool(clause_types), report_not_found_tool(clause_types)]


SEARCH_DOCUMENT = {
    "name": "search_document",
    "description": (
        "Hybrid (semantic + keyword) search over this document's chunks. Returns the top k chunks "
        "in reading order, each headed by its provenance tag (chunk id, page, section)."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 2, "description": "What to look for, in plain words."},
            "k": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
}

READ_CHUNK = {
    "name": "read_chunk",
    "description": "Read one chunk by id, optionally with up to 3 neighbouring chunks on each side.",
    "input_schema": {
        "type": "object",
        "properties": {
            "chunk_id": {"type": "string", "minLength": 1},
            "neighbours": {"type": "integer", "minimum": 0, "maximum": 3, "default": 0},
        },
        "required": ["chunk_id"],
        "additionalProperties": False,
    },
}

REGEX_DOCUMENT = {
    "name": "regex_document",
    "description": (
        "Search the document text with a Python regular expression (case-insensitive). Returns "
        "each match with its chunk id, page and some surrounding text. Good for exact values: "
        "amounts, dates, defined terms, section numbers."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "minLength": 1, "maxLength": 500},
            "max_matches": {"type": "integer", "minimum": 1, "maximum": 50, "default": 20},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
}

READ_HISTORY = {
    "name": "read_history",
    "description": (
        "Read back earlier turns of this conversation that were compacted into a history file "
        "(its name is given in the compaction note). Returns the text from offset, up to limit chars."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "offset": {"type": "integer", "minimum": 0, "default": 0},
            "limit": {"type": "integer", "minimum": 100, "maximum": 20000, "default": 8000},
        },
        "required": ["name"],
        "additionalProperties": False,
    },
}


def load_skill_tool(skill_names: Sequence[str]) -> dict:
    return {
        "name": "load_skill",
        "description": (
            "Load the full guide for one clause type (what counts, what does not, examples, edge "
            "cases). Load it before answering a question about that type when a skill exists."
        ),
        "input_schema": {
            "type": "object",
            "properties": {"name": {"type": "string", "enum": list(skill_names)}},
            "required": ["name"],
            "additionalProperties": False,
        },
    }


def all_tools(skill_names: Sequence[str], clause_types: Sequence[str] | None = None) -> list[dict]:
    """Every tool of the agent, the two answer tools last (put a cache breakpoint there if wanted)."""
    tools = [SEARCH_DOCUMENT, READ_CHUNK, REGEX_DOCUMENT, READ_HISTORY]
    if skill_names:
        tools.append(load_skill_tool(skill_names))
    return tools + answer_tools(clause_types)


OTHER_TYPE = "Other"


def classify_document_tool(doc_types: Sequence[str]) -> dict:
    """The tool a document's contract type is answered with (``extraction.doc_type``)."""
    return {
        "name": "classify_document",
        "description": (
            "Record the contract's type, with a passage of the document that shows it (its title or "
            f'the sentence naming the agreement). Answer "{OTHER_TYPE}" when no listed type fits.'
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "doc_type": {"type": "string", "enum": [*doc_types, OTHER_TYPE]},
                "evidence": {
                    "type": "string",
                    "minLength": 2,
                    "maxLength": 400,
                    "description": "A short passage copied character-for-character from the document.",
                },
            },
            "required": ["doc_type", "evidence"],
            "additionalProperties": False,
        },
    }


# --------------------------------------------------------------------------- validators


def not_found_record(clause_id: Any, clause_type: Any) -> dict:
    """The answer a ``report_not_found`` call records, in the form a found clause is recorded in."""
    return {"clause_id": clause_id, "clause_type": clause_type, "clause_text": NOT_FOUND, "citations": []}


def answer_of(name: str, data: Any, clause_types: Sequence[str] | None = None) -> tuple[Any, list[str]]:
    """The answer an answer tool's call records (``not_found_record`` for ``report_not_found``, the
    input as ``read_extract_clause`` reads it for ``extract_clause``) and what is wrong with it (empty
    when nothing is)."""
    if name == REPORT_NOT_FOUND:
        errors = validate_report_not_found(data, clause_types)
        given = data if isinstance(data, dict) else {}
        return not_found_record(given.get("clause_id"), given.get("clause_type")), errors
    answer = read_extract_clause(data)
    errors = validate_extract_clause(answer, clause_types)
    if isinstance(answer, dict) and answer.get("clause_text") == NOT_FOUND:
        errors.append(
            'extract_clause records a clause found in the document, not "not_found": when the document '
            "has no such clause, call report_not_found with the clause_id and clause_type"
        )
    return answer, errors


def validate_report_not_found(data: Any, clause_types: Sequence[str] | None = None) -> list[str]:
    """Errors (empty list when valid) for a ``report_not_found`` input, the rules of its schema."""
    if not isinstance(data, dict):
        return ["input must be an object"]
    errs = [f"unexpected field {key!r}" for key in sorted(set(data) - {"clause_id", "clause_type"})]
    if any(key in data for key in ("clause_text", "citations")):
        errs.append("report_not_found records no clause: a clause found is recorded with extract_clause")
    return errs + _question_errors(data, clause_types)


def _question_errors(data: dict, clause_types: Sequence[str] | None) -> list[str]:
    """The fields naming the question an answer is for: present, non-empty, a catalog clause type."""
    types = set(clause_types) if clause_types is not None else set(catalog.names())
    errs = [f"missing field {key!r}" for key in ("clause_id", "clause_type") if key not in data]
    for key in ("clause_id", "clause_type"):
        if key in data and (not isinstance(data[key], str) or not data[key]):
            errs.append(f"{key} must be a non-empty string")
    if isinstance(data.get("clause_type"), str) and data["clause_type"] and data["clause_type"] not in types:
        errs.append(f"clause_type {data['clause_type']!r} is not a catalog clause type")
    return errs


def read_extract_clause(data: Any) -> Any:
    """An ``extract_clause`` input as the server reads it: ``citations`` written as a string holding a
    JSON array of objects (models sometimes send the array as text) becomes that array, and a citation's
    ``page`` written as digits ("3") becomes the number, to be validated and verified like any other (the
    server computes the page from the chunk anyway; a quoted number must not cost the clause its retry).
    Anything else is returned as sent, for ``validate_extract_clause`` to name."""
    if not isinstance(data, dict):
        return data
    cits = data.get("citations")
    if isinstance(cits, str):
        try:
            decoded = json.loads(cits)
        except ValueError:
            return data
        if not (isinstance(decoded, list) and all(isinstance(c, dict) for c in decoded)):
            return data
        cits = decoded
    if not isinstance(cits, list):
        return data
    return {**data, "citations": [_read_page(c) for c in cits]}


def _read_page(citation: Any) -> Any:
    page = citation.get("page") if isinstance(citation, dict) else None
    if isinstance(page, str) and page.strip().isascii() and page.strip().isdigit():
        return {**citation, "page": int(page.strip())}
    return citation


def validate_extract_clause(data: Any, clause_types: Sequence[str] | None = None) -> list[str]:
    """Errors (empty list when valid) for a recorded answer: a clause found, by the rules of the
    ``extract_clause`` schema and the bounds its descriptions name (a page of 1 or more, a quote of two
    characters or more), or the not-found record (``clause_text`` "not_found", no citations)."""
    if not isinstance(data, dict):
        return ["input must be an object"]
    allowed = {"clause_id", "clause_type", "clause_text", "citations"}
    errs = [f"unexpected field {key!r}" for key in sorted(set(data) - allowed)]
    errs += _question_errors(data, clause_types)
    errs += [f"missing field {key!r}" for key in ("clause_text", "citations") if key not in data]
    if "clause_text" in data and (not isinstance(data["clause_text"], str) or not data["clause_text"]):
        errs.append("clause_text must be a non-empty string")
    cits = data.get("citations")
    if isinstance(cits, str):  # what read_extract_clause could not read as an array of objects
        errs.append(
            "citations must be a list of {chunk_id, page, quote} objects; the string given is not a "
            "JSON array of such objects"
        )
        cits = None
    elif "citations" in data and not isinstance(cits, list):
        errs.append("citations must be a list")
        cits = None
    text = data.get("clause_text")
    if isinstance(cits, list) and isinstance(text, str):
        if text == NOT_FOUND and cits:
            errs.append('clause_text "not_found" must come with no citations')
        if text != NOT_FOUND and text and not cits:
            errs.append("a found clause needs at least one citation {chunk_id, page, quote}")
    for n, c in enumerate(cits or [], 1):
        errs.extend(f"citation {n}: {e}" for e in _citation_errors(c))
    return errs


def _citation_errors(c: Any) -> list[str]:
    if not isinstance(c, dict):
        return ["must be an object {chunk_id, page, quote}"]
    errs = [f"unexpected field {k!r}" for k in sorted(set(c) - {"chunk_id", "page", "quote"})]
    if not isinstance(c.get("chunk_id"), str) or not c.get("chunk_id"):
        errs.append("chunk_id must be a non-empty string")
    page = c.get("page")
    if not isinstance(page, int) or isinstance(page, bool) or page < 1:
        errs.append("page must be an integer >= 1")
    if not isinstance(c.get("quote"), str) or len(c.get("quote") or "") < 2:
        errs.append("quote must be a string of at least 2 characters")
    return errs
