"""What the Anthropic API refuses, rule by rule, each rule from its documentation (the page beside it).

Pure. ``messages_request_errors(body)`` lists what ``POST /v1/messages`` refuses in ``body`` and
``batch_errors(body)`` what ``POST /v1/messages/batches`` refuses, each as the message of the API's
own 400 body (``{"type": "error", "error": {"type": "invalid_request_error", "message": ...},
"request_id": ...}``, https://platform.claude.com/docs/en/api/errors); empty when the API accepts it.
``tests.mock_anthropic`` and ``tests.mock_anthropic_batches`` answer every request through these
functions: there is no lenient mode.

Words of a refusal: where the API was seen to send them, these (the thread is named beside the rule);
where they are not published, the rule's own words in the API's form ``path: what is wrong``.

A Message Batch is refused whole at creation for its envelope (count, ``custom_id``s, size) and for
the fields of each request's ``params`` (``requests.0.params.timeout: Extra inputs are not
permitted``, as the API answered a batch that carried the SDK's ``timeout`` option). The rest of a
request's ``params`` (its conversation, tools and cache breakpoints) is checked "asynchronously, and
validation errors are returned when processing of the entire batch has ended"
(https://platform.claude.com/docs/en/build-with-claude/batch-processing): such a request comes back
``errored`` with the same message (``params_field_errors`` and ``conversation_errors`` are the two
halves of ``messages_request_errors``).

Consecutive turns of one role are not refused: "Consecutive `user` or `assistant` turns in your
request will be combined into a single turn" (``messages``,
https://platform.claude.com/docs/en/api/messages/create). The tool_use / tool_result rules below are
checked on the turns so combined. The first message may be either role: the reference no longer
asks for a user turn first.

Not modelled: model-specific refusals (an assistant prefill on models without it, sampling
parameters, thinking), server tools' own rules, content block kinds the app never sends (their
fields are left unchecked) and recursive schemas under ``strict``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import jsonschema

# --------------------------------------------------------------------------- documented limits

# "The maximum request size is 32 MB for standard API endpoints" (413 request_too_large,
# https://platform.claude.com/docs/en/api/errors). MB read as 10**6 bytes, the stricter reading.
MESSAGES_MAX_BYTES = 32_000_000
# "A Message Batch is limited to either 100,000 Message requests or 256 MB in size, whichever is
# reached first" (https://platform.claude.com/docs/en/build-with-claude/batch-processing).
BATCH_MAX_REQUESTS = 100_000
BATCH_MAX_BYTES = 256_000_000
# custom_id: "minLength: 1, maxLength: 64, pattern: ^[a-zA-Z0-9_-]{1,64}$", "Must be unique for each
# request within the Message Batch" (https://platform.claude.com/docs/en/api/messages/batches/create).
CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# A tool's name "Must match the regex ^[a-zA-Z0-9_-]{1,128}$"
# (https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools).
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
# "You can define up to 4 cache breakpoints"
# (https://platform.claude.com/docs/en/build-with-claude/prompt-caching).
MAX_BREAKPOINTS = 4

# The body parameters of "Create a Message" (https://platform.claude.com/docs/en/api/messages/create);
# anything else is refused, e.g. an SDK client option copied into a body (``timeout``).
MESSAGE_FIELDS = frozenset(
    {
        "model",
        "messages",
        "max_tokens",
        "system",
        "metadata",
        "stop_sequences",
        "stream",
        "temperature",
        "top_k",
        "top_p",
        "tools",
        "tool_choice",
        "thinking",
        "service_tier",
        "container",
        "cache_control",
        "inference_geo",
        "output_config",
        "diagnostics",
        "speed",
        "user_profile_id",
        "workspace_id",
    }
)
REQUIRED_FIELDS = ("model", "max_tokens", "messages")  # "required" in the same reference
BLOCK_FIELDS = {  # the fields of the content blocks this app sends (same reference, ``messages``)
    "text": {"type", "text", "cache_control", "citations"},
    "tool_use": {"type", "id", "name", "input", "cache_control", "caller"},
    "tool_result": {"type", "tool_use_id", "content", "is_error", "cache_control"},
}
CUSTOM_TOOL_FIELDS = {  # "Tool reference" fields of a user-defined tool (define-tools page)
    "type",
    "name",
    "description",
    "input_schema",
    "cache_control",
    "strict",
    "input_examples",
    "defer_loading",
    "allowed_callers",
    "eager_input_streaming",
}
TOOL_CHOICE_FIELDS = {  # tool_choice "auto" | "any" | "tool" | "none" (define-tools page, "Forcing tool use")
    "auto": {"type", "disable_parallel_tool_use"},
    "any": {"type", "disable_parallel_tool_use"},
    "tool": {"type", "name", "disable_parallel_tool_use"},
    "none": {"type"},
}

# JSON Schema under ``strict: true``: the documented subset, "JSON Schema limitations"
# (https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations):
# supported are the basic types, enum (of strings, numbers, bools or nulls), const, anyOf and allOf,
# $ref/$defs/definitions (not external), default, required, additionalProperties (false for objects),
# string formats, "Array minItems (only values 0 and 1 supported)"; not supported are numerical
# constraints (minimum, maximum, multipleOf...), string constraints (minLength, maxLength), "array
# constraints beyond minItems of 0 or 1" and any other additionalProperties. Annotations say nothing
# the grammar has to enforce and pass.
STRICT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "allOf",
        "$ref",
        "$defs",
        "definitions",
        "default",
        "format",
        "minItems",
        "pattern",
        "description",
        "title",
        "examples",
    }
)
STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)

# Words the API was seen to send (not published in the reference):
# "tools.106.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top
# level" (https://github.com/anthropics/claude-code/issues/5319);
# "tools.17.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12
# (https://json-schema.org/draft/2020-12). Learn more about tool use at ..."
# (https://github.com/anthropics/claude-code/issues/86664).
INVALID_SCHEMA = (
    "JSON schema is invalid. It must match JSON Schema draft 2020-12 "
    "(https://json-schema.org/draft/2020-12). Learn more about tool use at "
    "https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview."
)
TOP_LEVEL_COMBINATORS = ("oneOf", "allOf", "anyOf")


# --------------------------------------------------------------------------- the Messages API


def messages_request_errors(body: Any) -> list[str]:
    """What ``POST /v1/messages`` refuses in ``body`` (HTTP 400, invalid_request_error)."""
    errors = params_field_errors(body)
    if errors:
        return errors
    return conversation_errors(body)


def params_field_errors(body: Any, at: str = "") -> list[str]:
    """The fields of a Messages request body: known, present, of their type (in a batch: refused at
    creation, ``at`` = ``requests.N.params.``)."""
    if not isinstance(body, dict):
        return [f"{at.rstrip('.') or 'body'}: Input should be a valid dictionary"]
    errors = [f"{at}{key}: Extra inputs are not permitted" for key in body if key not in MESSAGE_FIELDS]
    errors += [f"{at}{key}: Field required" for key in REQUIRED_FIELDS if key not in body]
    if "model" in body and not isinstance(body["model"], str):
        errors.append(f"{at}model: Input should be a valid string")
    tokens = body.get("max_tokens")
    if "max_tokens" in body and (not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0):
        errors.append(f"{at}max_tokens: Input should be a valid integer greater than or equal to 0")
    errors += _messages_field_errors(body.get("messages"), at) if "messages" in body else []
    errors += _system_field_errors(body.get("system"), at)
    errors += _tools_field_errors(body.get("tools"), at)
    errors += _tool_choice_field_errors(body.get("tool_choice"), at)
    for path, control in _cache_controls(body, at):
        errors += cache_control_errors(control, path)
    return errors


def conversation_errors(body: dict) -> list[str]:
    """The rest of the Messages contract: tool_use / tool_result pairing, tool definitions, the forced
    tool and the cache breakpoints (in a batch: the request comes back ``errored``)."""
    errors = tool_pairing_errors(body.get("messages") or [])
    errors += tool_definition_errors(body.get("tools") or [])
    errors += tool_choice_errors(body.get("tool_choice"), body.get("tools") or [])
    errors += breakpoint_errors(body)
    return errors


def _messages_field_errors(messages: Any, at: str) -> list[str]:
    if not isinstance(messages, list):
        return [f"{at}messages: Input should be a valid list"]
    errors = []
    for i, msg in enumerate(messages):
        path = f"{at}messages.{i}"
        if not isinstance(msg, dict):
            errors.append(f"{path}: Input should be a valid dictionary")
            continue
        errors += [f"{path}.{k}: Extra inputs are not permitted" for k in msg if k not in ("role", "content")]
        if msg.get("role") not in ("user", "assistant"):
            errors.append(f"{path}.role: Input should be 'user' or 'assistant'")
        content = msg.get("content")
        if "content" not in msg:
            errors.append(f"{path}.content: Field required")
        elif not isinstance(content, (str, list)):
            errors.append(f"{path}.content: Input should be a valid string or a valid list")
        elif isinstance(content, list):
            for k, block in enumerate(content):
                errors += _block_field_errors(block, f"{path}.content.{k}")
    return errors


def _block_field_errors(block: Any, path: str) -> list[str]:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        return [f"{path}: Input should be a valid dictionary with a 'type'"]
    kind = block["type"]
    allowed = BLOCK_FIELDS.get(kind)
    if allowed is None:
        return []  # kinds this app never sends: left to the API
    errors = [f"{path}.{kind}.{k}: Extra inputs are not permitted" for k in block if k not in allowed]
    if kind == "text" and not isinstance(block.get("text"), str):
        errors.append(f"{path}.text.text: Input should be a valid string")
    if kind == "tool_use":
        errors += [f"{path}.tool_use.{k}: Field required" for k in ("id", "name", "input") if k not in block]
        if "input" in block and not isinstance(block["input"], dict):
            errors.append(f"{path}.tool_use.input: Input should be a valid dictionary")
    if kind == "tool_result":
        if not isinstance(block.get("tool_use_id"), str):
            errors.append(f"{path}.tool_result.tool_use_id: Field required")
        content = block.get("content")
        if isinstance(content, list):
            for k, sub in enumerate(content):
                errors += _block_field_errors(sub, f"{path}.tool_result.content.{k}")
        elif content is not None and not isinstance(content, str):
            errors.append(f"{path}.tool_result.content: Input should be a valid string or a valid list")
    return errors


def _system_field_errors(system: Any, at: str) -> list[str]:
    if system is None or isinstance(system, str):
        return []
    if not isinstance(system, list):
        return [f"{at}system: Input should be a valid string or a valid list"]
    errors = []
    for k, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            errors.append(f"{at}system.{k}.type: Input should be 'text'")
        else:
            errors += _block_field_errors(block, f"{at}system.{k}")
    return errors


def _tools_field_errors(tools: Any, at: str) -> list[str]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        return [f"{at}tools: Input should be a valid list"]
    errors = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            errors.append(f"{at}tools.{i}: Input should be a valid dictionary")
        elif tool.get("type") in (None, "custom"):
            path = f"{at}tools.{i}.custom"
            errors += [
                f"{path}.{k}: Extra inputs are not permitted" for k in tool if k not in CUSTOM_TOOL_FIELDS
            ]
            errors += [f"{path}.{k}: Field required" for k in ("name", "input_schema") if k not in tool]
            schema = tool.get("input_schema")
            if "input_schema" in tool and (not isinstance(schema, dict) or schema.get("type") != "object"):
                errors.append(f"{path}.input_schema.type: Input should be 'object'")
    return errors


def _tool_choice_field_errors(choice: Any, at: str) -> list[str]:
    if choice is None:
        return []
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind not in TOOL_CHOICE_FIELDS:
        return [f"{at}tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'"]
    errors = [
        f"{at}tool_choice.{kind}.{k}: Extra inputs are not permitted"
        for k in choice
        if k not in TOOL_CHOICE_FIELDS[kind]
    ]
    if kind == "tool" and not isinstance(choice.get("name"), str):
        errors.append(f"{at}tool_choice.tool.name: Field required")
    return errors


# --------------------------------------------------------------------------- tool use


def _turns(messages: list) -> list[tuple[str, list[tuple[int, int, dict]]]]:
    """The conversation as the API reads it: consecutive messages of one role combined into one turn,
    each block with its (message index, block index)."""
    turns: list[tuple[str, list[tuple[int, int, dict]]]] = []
    for i, msg in enumerate(messages):
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        located = [(i, k, b) for k, b in enumerate(blocks) if isinstance(b, dict)]
        if turns and turns[-1][0] == msg.get("role"):
            turns[-1][1].extend(located)
        else:
            turns.append((msg.get("role"), located))
    return turns


def tool_pairing_errors(messages: list) -> list[str]:
    """ "Tool result blocks must immediately follow their corresponding tool use blocks in the message
    history", and "In the user message containing tool results, the tool_result blocks must come FIRST
    in the content array. Any text must come AFTER all tool results"
    (https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls). Words as the API
    sends them: https://github.com/anthropics/claude-code/issues/7929 (a tool_use left without its
    result), https://github.com/anthropics/claude-code/issues/13460 (a result answering no tool_use of
    the previous turn), https://github.com/Zoo-Code-Org/Zoo-Code/pull/1705 (results not first)."""
    errors = []
    turns = _turns(messages)
    for n, (role, blocks) in enumerate(turns):
        if role == "assistant":
            uses = [(i, b.get("id")) for i, _, b in blocks if b.get("type") == "tool_use"]
            if not uses:
                continue
            reply = turns[n + 1][1] if n + 1 < len(turns) else []
            answered = {b.get("tool_use_id") for _, _, b in reply if b.get("type") == "tool_result"}
            missing = [str(tid) for _, tid in uses if tid not in answered]
            if missing:
                errors.append(
                    f"messages.{uses[0][0]}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                    "corresponding `tool_result` block in the next message."
                )
            elif any(b.get("type") != "tool_result" for _, _, b in reply[: len(uses)]):
                errors.append(
                    f"messages.{reply[0][0]}: Did not find {len(uses)} `tool_result` block(s) at the "
                    "beginning of this message. Messages following `tool_use` blocks must begin with a "
                    "matching number of `tool_result` blocks."
                )
        elif role == "user":
            before = turns[n - 1] if n else ("", [])
            asked = {b.get("id") for _, _, b in before[1] if b.get("type") == "tool_use"}
            asked = asked if before[0] == "assistant" else set()
            for i, k, b in blocks:
                if b.get("type") == "tool_result" and b.get("tool_use_id") not in asked:
                    errors.append(
                        f"messages.{i}.content.{k}: unexpected `tool_use_id` found in `tool_result` "
                        f"blocks: {b.get('tool_use_id')}. Each `tool_result` block must have a "
                        "corresponding `tool_use` block in the previous message."
                    )
    return errors


def tool_definition_errors(tools: list) -> list[str]:
    """Each user-defined tool: a name matching ``^[a-zA-Z0-9_-]{1,128}$`` and "input_schema: A JSON Schema
    object defining the expected parameters" (define-tools page); names unique ("tools: Tool names must
    be unique.", https://github.com/anthropics/claude-code/issues/10687); under ``strict: true`` only the
    documented subset of JSON Schema (``strict_schema_errors``)."""
    errors, names = [], []
    for i, tool in enumerate(tools):
        if tool.get("type") not in (None, "custom"):
            continue  # a server tool or an Anthropic-schema tool: its own page's rules
        path = f"tools.{i}.custom"
        name = tool.get("name")
        names.append(name)
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            errors.append(f"{path}.name: String should match pattern '{TOOL_NAME.pattern}'")
        errors += input_schema_errors(tool.get("input_schema") or {}, f"{path}.input_schema")
        if tool.get("strict") is True:
            errors += strict_schema_errors(tool.get("input_schema") or {}, f"{path}.input_schema")
    if len(set(map(str, names))) != len(names):
        errors.append("tools: Tool names must be unique.")
    return errors


def input_schema_errors(schema: dict, path: str) -> list[str]:
    """A tool's input_schema, any tool: a valid draft 2020-12 schema, and no oneOf / allOf / anyOf at
    its top (both refusals seen from the API; the threads are named at ``INVALID_SCHEMA``)."""
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError:
        return [f"{path}: {INVALID_SCHEMA}"]
    if any(key in schema for key in TOP_LEVEL_COMBINATORS):
        return [f"{path}: input_schema does not support oneOf, allOf, or anyOf at the top level"]
    return []


def strict_schema_errors(schema: Any, path: str) -> list[str]:
    """Keywords outside the subset ``strict: true`` supports (``STRICT_KEYWORDS``, "JSON Schema
    limitations"): each one a refusal naming where it stands."""
    errors = []
    for where, node in _subschemas(schema, path):
        for key in node:
            if key not in STRICT_KEYWORDS:
                errors.append(
                    f"{where}: '{key}' is not supported with strict tool use (JSON Schema limitations)"
                )
        if node.get("type") == "object" and node.get("additionalProperties") is not False:
            errors.append(f"{where}: 'additionalProperties' must be explicitly set to false for objects")
        if "minItems" in node and node["minItems"] not in (0, 1):
            errors.append(f"{where}: 'minItems' only supports the values 0 and 1")
        if "format" in node and node["format"] not in STRICT_FORMATS:
            errors.append(f"{where}: format {node['format']!r} is not supported")
        if any(isinstance(v, (dict, list)) for v in node.get("enum") or []):
            errors.append(f"{where}: 'enum' supports only strings, numbers, bools or nulls")
        if isinstance(node.get("$ref"), str) and not node["$ref"].startswith("#"):
            errors.append(f"{where}: external '$ref' is not supported")
    return errors


def _subschemas(schema: Any, path: str) -> Iterator[tuple[str, dict]]:
    if not isinstance(schema, dict):
        return
    yield path, schema
    for key in ("properties", "$defs", "definitions"):
        for name, sub in (schema.get(key) or {}).items():
            yield from _subschemas(sub, f"{path}.{key}.{name}")
    for key in ("items", "additionalProperties", "if", "then", "else", "not"):
        if isinstance(schema.get(key), dict):
            yield from _subschemas(schema[key], f"{path}.{key}")
    for key in ("anyOf", "allOf", "oneOf"):
        for n, sub in enumerate(schema.get(key) or []):
            yield from _subschemas(sub, f"{path}.{key}.{n}")


def tool_choice_errors(choice: Any, tools: list) -> list[str]:
    """``tool_choice: {"type": "tool", "name": ...}`` "forces Claude to always use one particular tool"
    (define-tools page, "Forcing tool use"): a tool of ``tools``. (The refusal's words are not
    published.)"""
    if not isinstance(choice, dict) or choice.get("type") != "tool":
        return []
    names = {t.get("name") for t in tools if isinstance(t, dict)}
    if choice.get("name") in names:
        return []
    return [f"tool_choice.tool.name: tool {choice.get('name')!r} is not one of the tools in `tools`"]


# --------------------------------------------------------------------------- prompt caching


def _cache_controls(body: dict, at: str = "") -> Iterator[tuple[str, Any]]:
    """Every ``cache_control`` of a request, with its path, in the order the prompt is read: "tools,
    system, and messages (in that order)" (prompt-caching page); a top-level one first."""
    if "cache_control" in body:
        yield f"{at}cache_control", body["cache_control"]
    for i, tool in enumerate(body.get("tools") or []):
        if isinstance(tool, dict) and "cache_control" in tool:
            yield f"{at}tools.{i}.cache_control", tool["cache_control"]
    system = body.get("system")
    for k, block in enumerate(system if isinstance(system, list) else []):
        if isinstance(block, dict) and "cache_control" in block:
            yield f"{at}system.{k}.cache_control", block["cache_control"]
    messages = body.get("messages")
    for i, msg in enumerate(messages if isinstance(messages, list) else []):
        content = msg.get("content") if isinstance(msg, dict) else None
        for k, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict):
                continue
            if "cache_control" in block:
                yield f"{at}messages.{i}.content.{k}.cache_control", block["cache_control"]
            inner = block.get("content") if block.get("type") == "tool_result" else None
            for j, sub in enumerate(inner if isinstance(inner, list) else []):
                if isinstance(sub, dict) and "cache_control" in sub:
                    yield f"{at}messages.{i}.content.{k}.content.{j}.cache_control", sub["cache_control"]


def cache_control_errors(control: Any, path: str) -> list[str]:
    """A ``cache_control`` is ``{"type": "ephemeral"}`` with an optional ``"ttl": "5m" | "1h"``, nothing
    else (``CacheControlEphemeral``, https://platform.claude.com/docs/en/api/messages/create; TTLs,
    https://platform.claude.com/docs/en/build-with-claude/prompt-caching). ``null`` sets none."""
    if control is None:
        return []
    if not isinstance(control, dict):
        return [f"{path}: Input should be a valid dictionary"]
    errors = [f"{path}.{k}: Extra inputs are not permitted" for k in control if k not in ("type", "ttl")]
    if control.get("type") != "ephemeral":
        errors.append(f"{path}.type: Input should be 'ephemeral'")
    if "ttl" in control and control["ttl"] not in ("5m", "1h"):
        errors.append(f"{path}.ttl: Input should be '5m' or '1h'")
    return errors


def breakpoint_errors(body: dict) -> list[str]:
    """ "You can define up to 4 cache breakpoints", and "Cache entries with longer TTL must appear before
    shorter TTLs" (https://platform.claude.com/docs/en/build-with-claude/prompt-caching). Words of the
    first refusal as the API sends them: "A maximum of 4 blocks with cache_control may be provided.
    Found 5." (https://github.com/github/copilot-cli/issues/4185)."""
    marks = [c for _, c in _cache_controls(body) if isinstance(c, dict)]
    errors = []
    if len(marks) > MAX_BREAKPOINTS:
        errors.append(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {len(marks)}."
        )
    ttls = [c.get("ttl", "5m") for c in marks]
    if "5m" in ttls and "1h" in ttls[ttls.index("5m") :]:
        errors.append("cache_control: a 1h cache entry must appear before any 5-minute cache entries")
    return errors


# --------------------------------------------------------------------------- Message Batches


def batch_errors(body: Any) -> list[str]:
    """What ``POST /v1/messages/batches`` refuses in ``body`` at creation (HTTP 400): ``requests`` of
    1 to 100,000 items (``minItems: 1, maxItems: 100000``), each ``{custom_id, params}`` with a
    ``custom_id`` matching ``^[a-zA-Z0-9_-]{1,64}$`` and unique in the batch
    (https://platform.claude.com/docs/en/api/messages/batches/create), each ``params`` a Messages body
    whose fields the API knows (``params_field_errors``). The size limit is ``batch_size_error``."""
    if not isinstance(body, dict):
        return ["body: Input should be a valid dictionary"]
    errors = [
        f"{k}: Extra inputs are not permitted"
        for k in body
        if k not in ("requests", "user_profile_id", "workspace_id")
    ]
    requests = body.get("requests")
    if "requests" not in body:
        return errors + ["requests: Field required"]
    if not isinstance(requests, list):
        return errors + ["requests: Input should be a valid list"]
    if not requests:
        errors.append("requests: List should have at least 1 item after validation, not 0")
    if len(requests) > BATCH_MAX_REQUESTS:
        errors.append(
            f"requests: List should have at most {BATCH_MAX_REQUESTS} items after validation, "
            f"not {len(requests)}"
        )
    seen: set[str] = set()
    for i, request in enumerate(requests):
        if not isinstance(request, dict):
            errors.append(f"requests.{i}: Input should be a valid dictionary")
            continue
        errors += [
            f"requests.{i}.{k}: Extra inputs are not permitted"
            for k in request
            if k not in ("custom_id", "params")
        ]
        errors += [f"requests.{i}.{k}: Field required" for k in ("custom_id", "params") if k not in request]
        cid = request.get("custom_id")
        if "custom_id" in request and (not isinstance(cid, str) or not CUSTOM_ID.match(cid)):
            errors.append(f"requests.{i}.custom_id: String should match pattern '{CUSTOM_ID.pattern}'")
        elif isinstance(cid, str) and cid in seen:
            errors.append(
                f"requests.{i}.custom_id: {cid!r} is used by another request; custom_id values must be "
                "unique within a batch"
            )
        if isinstance(cid, str):
            seen.add(cid)
        if "params" in request:
            errors += params_field_errors(request["params"], f"requests.{i}.params.")
    return errors


def batch_size_error(size: int) -> str | None:
    """A batch creation over 256 MB is refused with HTTP 413 ``request_too_large`` ("Request exceeds the
    maximum allowed number of bytes", https://platform.claude.com/docs/en/api/errors)."""
    if size <= BATCH_MAX_BYTES:
        return None
    return f"Request exceeds the maximum allowed number of bytes ({size} > {BATCH_MAX_BYTES})"


def messages_size_error(size: int) -> str | None:
    """A Messages request over 32 MB: HTTP 413 ``request_too_large`` (same page)."""
    if size <= MESSAGES_MAX_BYTES:
        return None
    return f"Request exceeds the maximum allowed number of bytes ({size} > {MESSAGES_MAX_BYTES})"


def encoded_size(body: Any) -> int:
    """Bytes of ``body`` as the SDK sends it (compact JSON, UTF-8), for a body that arrived parsed."""
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())
