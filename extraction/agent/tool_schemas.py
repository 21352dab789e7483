"""Tool definitions (Anthropic ``tools`` format) and the extract_clause validator.

The ``extract_clause`` schema itself refuses a found clause without a citation:
``if clause_text == "not_found" then citations maxItems 0 else citations
minItems 1`` (JSON Schema draft 2020-12 ``if/then/else``). Send these tools
without ``strict: true`` (strict tool use accepts a narrower schema subset).
``validate_extract_clause`` checks the same rules in plain Python, so the server
never depends on the model having honoured the schema. ``read_extract_clause`` runs
first: ``citations`` sent as a string holding a JSON array is read as that array, and a
citation's ``page`` sent as digits as that number.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from extraction import catalog

NOT_FOUND = "not_found"


def extract_clause_schema(clause_types: Sequence[str] | None = None) -> dict:
    """JSON schema of the ``extract_clause`` input; ``clause_type`` enum = catalog names."""
    types = list(clause_types) if clause_types is not None else catalog.names()
    citation = {
        "type": "object",
        "properties": {
            "chunk_id": {
                "type": "string",
                "minLength": 1,
                "description": "Chunk id from the context tag (chunk:...) the quote was read from.",
            },
            "page": {
                "type": "integer",
                "minimum": 1,
                "description": "Physical page from the context tag (p.N).",
            },
            "quote": {
                "type": "string",
                "minLength": 2,
                "description": "One contiguous passage copied character-for-character from the chunk.",
            },
        },
        "required": ["chunk_id", "page", "quote"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "clause_id": {
                "type": "string",
                "minLength": 1,
                "description": "The clause_id given in the question; echo it unchanged.",
            },
            "clause_type": {"type": "string", "enum": types},
            "clause_text": {
                "type": "string",
                "minLength": 1,
                "description": 'The clause verbatim: the words of its quotes in their order ("…" where '
                'words are left out), or exactly "not_found".',
            },
            "citations": {
                "type": "array",
                "items": citation,
                "description": "Evidence. At least one when found; none when not_found.",
            },
        },
        "required": ["clause_id", "clause_type", "clause_text", "citations"],
        "additionalProperties": False,
        "if": {"properties": {"clause_text": {"const": NOT_FOUND}}, "required": ["clause_text"]},
        "then": {"properties": {"citations": {"maxItems": 0}}},
        "else": {"properties": {"citations": {"minItems": 1}}},
    }


def extract_clause_tool(clause_types: Sequence[str] | None = None) -> dict:
    return {
        "name": "extract_clause",
        "description": (
            "Record the answer for the clause question: the clause text copied verbatim from the document "
            "with at least one citation (chunk_id, page, verbatim quote) for every part of it, or "
            'clause_text "not_found" with no citations when the document has no such clause. '
            "The server verifies every quote against the source and rejects paraphrased quotes or values."
        ),
        "input_schema": extract_clause_schema(clause_types),
    }


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
    """Every tool of the agent, ``extract_clause`` last (put a cache breakpoint there if wanted)."""
    tools = [SEARCH_DOCUMENT, READ_CHUNK, REGEX_DOCUMENT, READ_HISTORY]
    if skill_names:
        tools.append(load_skill_tool(skill_names))
    tools.append(extract_clause_tool(clause_types))
    return tools


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


# --------------------------------------------------------------------------- validator


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
    """Errors (empty list when valid) for an ``extract_clause`` input, same rules as the schema."""
    if not isinstance(data, dict):
        return ["input must be an object"]
    types = set(clause_types) if clause_types is not None else set(catalog.names())
    errs: list[str] = []
    allowed = {"clause_id", "clause_type", "clause_text", "citations"}
    for key in sorted(set(data) - allowed):
        errs.append(f"unexpected field {key!r}")
    for key in ("clause_id", "clause_type", "clause_text", "citations"):
        if key not in data:
            errs.append(f"missing field {key!r}")
    for key in ("clause_id", "clause_type", "clause_text"):
        if key in data and (not isinstance(data[key], str) or not data[key]):
            errs.append(f"{key} must be a non-empty string")
    if isinstance(data.get("clause_type"), str) and data["clause_type"] and data["clause_type"] not in types:
        errs.append(f"clause_type {data['clause_type']!r} is not a catalog clause type")
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
