"""A stand-in for the Anthropic HTTP API that plays its real response shapes and holds requests to its
contract.

Drive the real ``anthropic`` client through it in-process::

    api = MockAnthropic(FakeClaude({"Governing Law": "This Agreement shall be governed by ..."}))
    client = api.client()                     # anthropic.Anthropic over an httpx2.MockTransport
    api.script.append(api.overloaded())       # the next /v1/messages call gets a 529 first

or over real HTTP for another process (a Celery worker): ``url, stop = serve(api)`` then
``ANTHROPIC_BASE_URL=url``.

Every request is checked against the API's documented contract (``tests.anthropic_contract``) before
anything answers it, and one the API would refuse gets the API's refusal: HTTP 400 ``{"type":
"error", "error": {"type": "invalid_request_error", "message"}, "request_id"}`` (413
``request_too_large`` for a body over the size limit); for a batch request whose conversation breaks
the contract, an ``errored`` result with that body. The refusals are kept in ``refusals`` (their
messages, in order). There is no lenient mode.

Shapes (as documented for the Messages API):
- a message: ``{"id": "msg_…", "type": "message", "role": "assistant", "model", "content": [text |
  tool_use blocks], "stop_reason": end_turn|tool_use|max_tokens|refusal|pause_turn|
  model_context_window_exceeded, "stop_sequence": null, "usage": {input_tokens, output_tokens,
  cache_creation_input_tokens, cache_read_input_tokens, service_tier}}``;
- an error: HTTP 429/500/529 with ``{"type": "error", "error": {"type": "rate_limit_error"|"api_error"|
  "overloaded_error", "message"}, "request_id"}`` and a ``request-id`` header;
- Message Batches: ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}``,
  ``GET /v1/messages/batches/{id}/results`` (JSONL, one ``{"custom_id", "result"}`` a line).

Prompt caching is simulated: the first request with a given prefix up to a ``cache_control``
block reports ``cache_creation_input_tokens``, later ones ``cache_read_input_tokens``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import httpx2

from extraction.agent.provenance import parse_blocks
from tests.anthropic_contract import (
    batch_errors,
    batch_size_error,
    conversation_errors,
    encoded_size,
    messages_request_errors,
    messages_size_error,
)

MODEL = "claude-sonnet-4-5-20250929"
_ids = itertools.count(1)


def _id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):04d}{hashlib.sha1(str(time.time_ns()).encode()).hexdigest()[:18]}"


def _tokens(obj: Any) -> int:
    text = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False, sort_keys=True)
    return max(1, -(-len(text) // 4))


# --------------------------------------------------------------------------- builders


def text_block(text: str) -> dict:
    return {"type": "text", "text": text}


def tool_use_block(name: str, input: dict, id: str | None = None) -> dict:
    return {"type": "tool_use", "id": id or _id("toolu"), "name": name, "input": input}


def message(
    content: list[dict], stop_reason: str = "end_turn", *, model: str = MODEL, usage: dict | None = None
) -> dict:
    """A Messages API response body. ``usage`` is filled in by the mock when None."""
    return {
        "id": _id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }


def extract_call(clause_id: str, clause_type: str, clause_text: str, citations: list[dict]) -> dict:
    """An assistant message calling extract_clause (a clause found, with its citations)."""
    return message(
        [
            tool_use_block(
                "extract_clause",
                {
                    "clause_id": clause_id,
                    "clause_type": clause_type,
                    "clause_text": clause_text,
                    "citations": citations,
                },
            )
        ],
        "tool_use",
    )


def not_found_call(clause_id: str, clause_type: str) -> dict:
    """An assistant message calling report_not_found (the document has no such clause)."""
    return message(
        [tool_use_block("report_not_found", {"clause_id": clause_id, "clause_type": clause_type})], "tool_use"
    )


@dataclass
class ErrorReply:
    status: int
    type: str
    message: str
    retry_after_ms: int | None = 1

    def response(self) -> tuple[int, dict, dict]:
        rid = _id("req")
        headers = {"request-id": rid, "content-type": "application/json"}
        if self.retry_after_ms is not None:
            headers["retry-after-ms"] = str(self.retry_after_ms)
        body = {"type": "error", "error": {"type": self.type, "message": self.message}, "request_id": rid}
        return self.status, headers, body


# --------------------------------------------------------------------------- reading a request

_QUESTION = re.compile(r"clause_id: (?P<id>\S+)\nQuestion: find the (?P<type>.+?) clause in this document\.")


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    out = []
    for b in content or []:
        if b.get("type") == "text":
            out.append(b["text"])
        elif b.get("type") == "tool_result":
            out.append(
                _text_of(b.get("content")) if isinstance(b.get("content"), list) else str(b.get("content"))
            )
    return "\n".join(out)


_NOTE_QUESTION = re.compile(r"Current question: clause_id (?P<id>\S+): find the (?P<type>.+?) clause \(")


def current_question(body: dict) -> tuple[str, str] | None:
    """(clause_id, clause type name) of the question being asked: the system turn note names it
    (it survives compaction), else the latest question in the conversation."""
    system = body.get("system")
    if isinstance(system, list):
        for block in reversed(system):
            m = _NOTE_QUESTION.search(block.get("text", ""))
            if m:
                return m["id"], m["type"]
    for m in reversed(body.get("messages", [])):
        if m.get("role") != "user":
            continue
        hits = list(_QUESTION.finditer(_text_of(m.get("content"))))
        if hits:
            return hits[-1]["id"], hits[-1]["type"]
    return None


def pending_tool_results(body: dict) -> list[dict]:
    last = (body.get("messages") or [{}])[-1]
    content = last.get("content")
    return (
        [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if isinstance(content, list)
        else []
    )


def all_context(body: dict) -> str:
    """Every provenance-tagged text the model has been shown (questions and tool results)."""
    return "\n".join(_text_of(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user")


def cite(body: dict, quote: str) -> dict | None:
    """A citation {chunk_id, page, quote} for ``quote`` from the tagged blocks in the conversation."""
    norm = " ".join(quote.split())
    for tag, text in parse_blocks(all_context(body)):
        flat = " ".join(text.split())
        if norm in flat and tag.chunk_ids:
            return {"chunk_id": tag.chunk_ids[0], "page": tag.page_start, "quote": quote}
    return None


# --------------------------------------------------------------------------- the fake model


@dataclass
class FakeClaude:
    """Answers clause questions from an answer key, citing chunks from the tags it was shown.

    ``answers``: clause type name -> verbatim quote (or None: reported not found with
    ``report_not_found``). A type not in the key is reported not found. ``wrong_quote``: clause type
    -> how many of its first answers use a quote that is not in the document. ``search_first``: types
    for which the model calls search_document once before answering. ``skill_first``: types for which
    the model loads the skill the question names before answering. ``doc_type``: the (type, evidence)
    it answers when asked for the contract's type.
    """

    answers: dict[str, str | None] = field(default_factory=dict)
    wrong_quote: dict[str, int] = field(default_factory=dict)
    search_first: set[str] = field(default_factory=set)
    skill_first: set[str] = field(default_factory=set)
    doc_type: tuple[str, str] = ("Other", "")
    calls: int = 0

    def __call__(self, body: dict) -> dict:
        self.calls += 1
        if (body.get("tool_choice") or {}).get("name") == "classify_document":
            kind, evidence = self.doc_type
            return message(
                [tool_use_block("classify_document", {"doc_type": kind, "evidence": evidence})], "tool_use"
            )
        q = current_question(body)
        if q is None:
            return message([text_block("I have no clause question to answer.")], "end_turn")
        clause_id, clause_type = q
        skill = re.search(r'Load the skill "([^"]+)" first', _text_of(_question_message(body).get("content")))
        if clause_type in self.skill_first and skill and not self._used_since_question(body, "load_skill"):
            return message([tool_use_block("load_skill", {"name": skill.group(1)})], "tool_use")
        if clause_type in self.search_first and not self._used_since_question(body, "search_document"):
            return message(
                [
                    text_block("Let me search first."),
                    tool_use_block("search_document", {"query": clause_type, "k": 3}),
                ],
                "tool_use",
            )
        quote = self.answers.get(clause_type)
        if quote is None:
            return not_found_call(clause_id, clause_type)
        if self.wrong_quote.get(clause_type, 0) > 0:
            self.wrong_quote[clause_type] -= 1
            c = cite(body, quote) or {"chunk_id": "unknown", "page": 1}
            bad = "The parties agree to a cap of about $250 on all claims."
            return extract_call(clause_id, clause_type, bad, [{**c, "quote": bad}])
        c = cite(body, quote)
        if c is None:
            return message(
                [
                    text_block("I could not find it in what I was shown; searching."),
                    tool_use_block("search_document", {"query": quote[:60], "k": 5}),
                ],
                "tool_use",
            )
        return extract_call(clause_id, clause_type, quote, [c])

    @staticmethod
    def _used_since_question(body: dict, tool: str) -> bool:
        msgs = body.get("messages", [])
        start = _question_index(body)
        return any(
            b.get("type") == "tool_use" and b.get("name") == tool
            for m in msgs[start:]
            if m.get("role") == "assistant"
            for b in m.get("content") or []
        )


def _question_index(body: dict) -> int:
    """Index of the message that asks the current clause question (0 when none does)."""
    return max(
        (
            i
            for i, m in enumerate(body.get("messages", []))
            if m.get("role") == "user" and _QUESTION.search(_text_of(m.get("content")))
        ),
        default=0,
    )


def _question_message(body: dict) -> dict:
    msgs = body.get("messages", [])
    return msgs[_question_index(body)] if msgs else {}


Responder = Callable[[dict], "dict | ErrorReply"]
Scripted = "dict | ErrorReply | Callable[[dict], dict | ErrorReply] | None"


# --------------------------------------------------------------------------- the mock API


class MockAnthropic:
    """Routes Anthropic API paths; ``/v1/messages`` replies come from ``script`` first (FIFO, each
    entry a body, an ``ErrorReply``, a callable ``body -> reply``, or None = ask ``model``), then from
    ``model``. Every request body is kept in ``requests`` (messages calls) / ``all_requests``; a request
    the API would refuse is answered with its refusal before the script or the model is asked, and the
    refusal's message kept in ``refusals``."""

    def __init__(self, model: Responder | None = None, *, delay: float = 0.0, batch_polls: int = 1):
        self.model = model or FakeClaude()
        self.script: deque = deque()
        self.requests: list[dict] = []
        self.all_requests: list[tuple[str, str, dict | None]] = []
        self.request_ids: list[str] = []
        self.refusals: list[str] = []  # the message of every refusal the contract made, in order
        self.delay = delay
        self.batch_polls = batch_polls
        self._cache: set[str] = set()
        self._batches: dict[str, dict] = {}
        self._lock = threading.Lock()

    # errors as the API sends them
    @staticmethod
    def overloaded(msg: str = "Overloaded") -> ErrorReply:
        return ErrorReply(529, "overloaded_error", msg)

    @staticmethod
    def rate_limited(
        msg: str = "Number of request tokens has exceeded your per-minute rate limit",
    ) -> ErrorReply:
        return ErrorReply(429, "rate_limit_error", msg)

    @staticmethod
    def server_error(msg: str = "Internal server error") -> ErrorReply:
        return ErrorReply(500, "api_error", msg)

    @staticmethod
    def invalid_request(msg: str) -> ErrorReply:
        return ErrorReply(400, "invalid_request_error", msg, retry_after_ms=None)

    # ---- clients
    @property
    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self._handle_httpx)

    def client(self, max_retries: int = 3) -> anthropic.Anthropic:
        return anthropic.Anthropic(
            api_key="sk-ant-test",
            max_retries=max_retries,
            http_client=httpx2.Client(transport=self.transport),
        )

    def _handle_httpx(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content) if request.content else None
        status, headers, payload = self.handle(
            request.method, request.url.path, body, dict(request.headers), size=len(request.content)
        )
        if isinstance(payload, str):
            return httpx2.Response(status, headers=headers, text=payload)
        return httpx2.Response(status, headers=headers, json=payload)

    # ---- routing
    def handle(
        self, method: str, path: str, body: dict | None, headers: dict | None = None, size: int | None = None
    ):
        """One HTTP request; ``size``: the bytes of its body as sent (else counted from ``body``)."""
        if self.delay:
            time.sleep(self.delay)
        with self._lock:
            self.all_requests.append((method, path, body))
            if headers is not None and not (headers.get("x-api-key") or headers.get("authorization")):
                return ErrorReply(
                    401, "authentication_error", "x-api-key header is required", None
                ).response()
            if method == "POST" and path in ("/v1/messages", "/v1/messages/batches"):
                size = encoded_size(body) if size is None else size
                too_large = (messages_size_error if path == "/v1/messages" else batch_size_error)(size)
                if too_large:
                    self.refusals.append(too_large)
                    return ErrorReply(413, "request_too_large", too_large, None).response()
            if method == "POST" and path == "/v1/messages":
                return self._messages(body)
            if method == "POST" and path == "/v1/messages/batches":
                errors = batch_errors(body)
                if errors:
                    return self.refuse(errors[0]).response()
                return self._batch_create(body)
            m = re.fullmatch(r"/v1/messages/batches/([^/]+)(/results|/cancel)?", path)
            if m and m[2] == "/results":
                return self._batch_results(m[1])
            if m and method == "GET":
                return self._batch_retrieve(m[1])
            return ErrorReply(404, "not_found_error", f"{method} {path} not found", None).response()

    def _reply_for(self, body: dict):
        entry = self.script.popleft() if self.script else None
        if callable(entry) and not isinstance(entry, ErrorReply):
            entry = entry(body)
        if entry is None:
            entry = self.model(body)
        return entry

    def refuse(self, message: str) -> ErrorReply:
        """The API's 400 for a request breaking its contract (kept in ``refusals``)."""
        self.refusals.append(message)
        return self.invalid_request(message)

    def refused_result(self, params: dict) -> dict | None:
        """The ``errored`` result of a batch request whose params the API refuses when it processes them
        (None when it accepts them)."""
        errors = conversation_errors(params)
        if not errors:
            return None
        _, _, payload = self.refuse(errors[0]).response()
        return {"type": "errored", "error": payload}

    def _messages(self, body: dict):
        self.requests.append(body)
        errors = messages_request_errors(body)
        if errors:
            status, headers, payload = self.refuse(errors[0]).response()
            self.request_ids.append(headers["request-id"])
            return status, headers, payload
        reply = self._reply_for(body)
        if isinstance(reply, ErrorReply):
            status, headers, payload = reply.response()
            self.request_ids.append(headers["request-id"])
            return status, headers, payload
        out = dict(reply)
        out["model"] = body.get("model", out.get("model"))
        if out.get("usage") is None:
            out["usage"] = self._usage(body, out)
        rid = _id("req")
        self.request_ids.append(rid)
        return 200, {"content-type": "application/json", "request-id": rid}, out

    # ---- usage and caching
    def _cached_prefix(self, body: dict) -> tuple[str | None, int]:
        parts: list[Any] = [body.get("tools") or []]
        system = body.get("system")
        if isinstance(system, list):
            for block in system:
                parts.append(block)
                if block.get("cache_control"):
                    blob = json.dumps(parts, sort_keys=True)
                    return hashlib.sha256(blob.encode()).hexdigest(), _tokens(blob)
        return None, 0

    def _input_size(self, body: dict) -> int:
        return (
            _tokens(body.get("tools") or [])
            + _tokens(body.get("system") or "")
            + _tokens(body.get("messages"))
        )

    def _usage(self, body: dict, out: dict) -> dict:
        key, cached = self._cached_prefix(body)
        total = self._input_size(body)
        write = read = 0
        if key is not None:
            if key in self._cache:
                read = cached
            else:
                write = cached
                self._cache.add(key)
        return {
            "input_tokens": max(1, total - read - write),
            "output_tokens": _tokens(out["content"]),
            "cache_creation_input_tokens": write,
            "cache_read_input_tokens": read,
            "service_tier": "standard",
        }

    # ---- batches
    def _batch_view(self, b: dict) -> dict:
        ended = b["polls"] >= self.batch_polls
        n = len(b["requests"])
        return {
            "id": b["id"],
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else n,
                "succeeded": n if ended else 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "ended_at": "2026-01-01T00:10:00Z" if ended else None,
            "created_at": "2026-01-01T00:00:00Z",
            "expires_at": "2026-01-02T00:00:00Z",
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"https://api.anthropic.com/v1/messages/batches/{b['id']}/results"
            if ended
            else None,
        }

    def _batch_create(self, body: dict):
        bid = _id("msgbatch")
        self._batches[bid] = {"id": bid, "requests": body.get("requests", []), "polls": 0}
        return 200, {"content-type": "application/json"}, self._batch_view(self._batches[bid])

    def _batch_retrieve(self, bid: str):
        b = self._batches.get(bid)
        if b is None:
            return ErrorReply(404, "not_found_error", f"batch {bid} not found", None).response()
        b["polls"] += 1
        return 200, {"content-type": "application/json"}, self._batch_view(b)

    def _batch_results(self, bid: str):
        b = self._batches[bid]
        lines = []
        for req in b["requests"]:
            refused = self.refused_result(req["params"])
            if refused is not None:
                lines.append(json.dumps({"custom_id": req["custom_id"], "result": refused}))
                continue
            reply = self._reply_for(req["params"])
            if isinstance(reply, ErrorReply):
                _, _, payload = reply.response()
                result = {"type": "errored", "error": payload}
            else:
                msg = dict(reply)
                msg["model"] = req["params"].get("model", msg["model"])
                msg["usage"] = msg.get("usage") or self._usage(req["params"], msg)
                result = {"type": "succeeded", "message": msg}
            lines.append(json.dumps({"custom_id": req["custom_id"], "result": result}))
        return 200, {"content-type": "application/binary"}, "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- over real HTTP


def serve(api: MockAnthropic, host: str = "127.0.0.1") -> tuple[str, Callable[[], None]]:
    """Serve ``api`` on a free port in a thread; returns (base_url, stop)."""

    class Handler(BaseHTTPRequestHandler):
        def _go(self):
            n = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(n) if n else b""
            body = json.loads(raw) if raw else None
            path = self.path.split("?", 1)[0]
            status, headers, payload = api.handle(
                self.command, path, body, {k.lower(): v for k, v in self.headers.items()}, size=n
            )
            data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _go

        def log_message(self, *args):  # quiet
            pass

    server = ThreadingHTTPServer((host, 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop():
        server.shutdown()
        server.server_close()

    return f"http://{host}:{server.server_address[1]}", stop
