"""The Message Batches endpoints played in full, on top of ``tests.mock_anthropic.MockAnthropic``.

    api = BatchAPI(FakeClaude(ANSWERS), polls_to_end=2)
    api.plan["r1-d2-t3"] = ["expired", "succeeded"]      # per custom_id, one outcome per batch
    client = api.client()

What it adds to the base mock (whose ``/v1/messages`` side is unchanged):

* ``POST /v1/messages/batches`` -> a ``message_batch`` object, ``processing_status: in_progress``, or
  the API's refusal of a batch breaking its contract (``tests.anthropic_contract.batch_errors``: over
  100,000 requests or 256 MB, a ``custom_id`` off its pattern or used twice, a ``params`` field the API
  does not know); ``limits=(max_requests, max_bytes)`` refuses a larger body the way the API does (HTTP
  413 ``request_too_large``, or 400 for too many requests), so a test can cross small limits cheaply;
  ``create_script`` (``ErrorReply``s) answers the next creations before any is accepted. Every
  creation's body is kept in ``posted`` (raw bytes and the Content-Length header sent).
* ``GET /v1/messages/batches/{id}`` -> ``in_progress`` for ``polls_to_end - 1`` polls, then ``ended``
  with ``request_counts`` matching the results and a ``results_url``.
* ``GET .../results`` -> the JSONL file, one ``{"custom_id", "result"}`` line each, in an order other
  than the requests' (reversed), streamed in small chunks. Results are decided once, when the batch
  ends, and every download serves the same bytes (a re-harvest sees the same file).
* ``POST .../cancel`` -> ``canceling``; requests not yet decided end ``canceled``; ``cancel_script``
  (``ErrorReply``s) answers the next cancels first. Every cancel asked is kept in ``cancels`` (batch ids).
* ``GET /v1/messages/batches`` -> the batches, newest first, in pages (``limit``, default 20, and
  ``after_id``; ``has_more``, ``first_id``, ``last_id``) as the API lists them; each batch's
  ``created_at`` is the time it was created here.
* ``damage[batch_id]``: ``(text, download) -> text`` changes the file served at a download (1, 2, ...):
  a line that is not JSON, a line cut off as a broken stream leaves it.

Outcomes: a request whose ``params`` break the contract when the batch is processed (its
conversation, tools or cache breakpoints: ``conversation_errors``) comes back ``errored`` with the API's
400 body, before any outcome is asked for it. Otherwise ``rules`` (callables ``(custom_id, params,
attempt) -> outcome | None``) are asked first; then ``plan[custom_id]``, consumed one entry per batch
the request is in; default ``"succeeded"``): ``"succeeded"`` (the model answers), ``"errored"`` (an
``ErrorReply``'s body, or ``("errored", ErrorReply)``), ``"expired"``, ``"canceled"``, ``"max_tokens"``
(a succeeded message that stopped at max_tokens), or a message dict / callable as in the base script.
"""

from __future__ import annotations

import json
from collections import deque
from datetime import UTC, datetime
from typing import Any

import httpx2

from tests.mock_anthropic import ErrorReply, MockAnthropic, _id, message, text_block

ENDED_AT = "2026-01-01T01:00:00Z"


class BatchAPI(MockAnthropic):
    def __init__(
        self,
        model=None,
        *,
        polls_to_end: int = 1,
        limits: tuple[int, int] | None = None,
        chunk_bytes: int = 4096,
        **kwargs,
    ):
        super().__init__(model, **kwargs)
        self.polls_to_end = polls_to_end
        self.limits = limits
        self.chunk_bytes = chunk_bytes
        self.plan: dict[str, Any] = {}
        self.rules: list = []  # callables (custom_id, params, attempt) -> outcome or None
        self.attempts: dict[str, int] = {}
        self.results_base = "https://api.anthropic.com"  # set to serve()'s url when served over HTTP
        self.created: list[dict] = []  # {"id", "requests", "bytes"} per accepted batch
        self.refused: list[dict] = []
        self.downloads: dict[str, int] = {}
        self.damage: dict[str, Any] = {}  # batch id -> (text, download) -> text served
        self.create_script: deque = deque()  # ErrorReply for the next batch creations, in order
        self.posted: list[dict] = []  # {"body": bytes, "content_length": str | None} per creation
        self.cancel_script: deque = deque()  # ErrorReply for the next cancels, in order
        self.cancels: list[str] = []  # the batch id of every cancel asked

    # ------------------------------------------------------------------ transport
    def _handle_httpx(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if request.method == "POST" and path == "/v1/messages/batches":
            self.posted.append(
                {"body": request.content, "content_length": request.headers.get("content-length")}
            )
            if self.create_script:
                status, headers, body = self.create_script.popleft().response()
                return httpx2.Response(status, headers=headers, json=body)
        if request.method == "POST" and path == "/v1/messages/batches" and self.limits:
            refusal = self._over_limits(request.content)
            if refusal is not None:
                status, headers, body = refusal.response()
                self.refused.append({"bytes": len(request.content), "status": status})
                return httpx2.Response(status, headers=headers, json=body)
        if request.method == "POST" and path == "/v1/messages/batches":
            self._last_body_bytes = len(request.content)
        if request.method == "GET" and path == "/v1/messages/batches":
            return httpx2.Response(200, json=self._batch_list(request.url.params))
        if request.method == "GET" and path.endswith("/results"):
            status, headers, payload = self.handle("GET", path, None, dict(request.headers))
            if status != 200:
                return httpx2.Response(status, headers=headers, json=payload)
            data = payload.encode()
            step = self.chunk_bytes
            return httpx2.Response(
                status, headers=headers, stream=httpx2.ByteStream(data) if not step else _Chunks(data, step)
            )
        return super()._handle_httpx(request)

    def _over_limits(self, raw: bytes) -> ErrorReply | None:
        max_requests, max_bytes = self.limits
        if len(raw) > max_bytes:
            return ErrorReply(
                413,
                "request_too_large",
                f"Request exceeds the maximum allowed number of bytes ({len(raw)} > {max_bytes})",
                None,
            )
        n = len(json.loads(raw).get("requests", []))
        if n > max_requests:
            return ErrorReply(
                400,
                "invalid_request_error",
                f"requests: at most {max_requests} requests per batch ({n} given)",
                None,
            )
        return None

    # ------------------------------------------------------------------ routing
    def handle(
        self, method: str, path: str, body: dict | None, headers: dict | None = None, size: int | None = None
    ):
        if method == "POST" and path.endswith("/cancel"):
            bid = path.split("/")[-2]
            with self._lock:
                self.cancels.append(bid)
                if self.cancel_script:
                    return self.cancel_script.popleft().response()
                b = self._batches.get(bid)
                if b is None:
                    return ErrorReply(404, "not_found_error", f"batch {bid} not found", None).response()
                b["cancel"] = True
                return 200, {"content-type": "application/json"}, self._batch_view(b)
        return super().handle(method, path, body, headers, size)

    def _batch_create(self, body: dict):
        bid = _id("msgbatch")
        requests = body.get("requests", [])
        ids = [r["custom_id"] for r in requests]
        self._batches[bid] = {
            "id": bid,
            "requests": requests,
            "polls": 0,
            "lines": None,
            "cancel": False,
            "created_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        }
        self.created.append(
            {
                "id": bid,
                "requests": len(requests),
                "bytes": getattr(self, "_last_body_bytes", 0),
                "custom_ids": ids,
            }
        )
        return 200, {"content-type": "application/json"}, self._batch_view(self._batches[bid])

    def _batch_view(self, b: dict) -> dict:
        ended = b["polls"] >= self.polls_to_end
        n = len(b["requests"])
        counts = {"processing": n, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if ended:
            lines = self._decide(b)
            counts["processing"] = 0
            for line in lines:
                counts[line["result"]["type"]] += 1
        status = "ended" if ended else ("canceling" if b["cancel"] else "in_progress")
        return {
            "id": b["id"],
            "type": "message_batch",
            "processing_status": status,
            "request_counts": counts,
            "ended_at": ENDED_AT if ended else None,
            "created_at": b.get("created_at", "2026-01-01T00:00:00Z"),
            "expires_at": "2026-01-02T00:00:00Z",
            "archived_at": None,
            "cancel_initiated_at": "2026-01-01T00:30:00Z" if b["cancel"] else None,
            "results_url": f"{self.results_base}/v1/messages/batches/{b['id']}/results" if ended else None,
        }

    def _batch_list(self, params) -> dict:
        with self._lock:
            newest_first = list(reversed(self._batches.values()))  # (a dict keeps the order of creation)
            start = 0
            if params.get("after_id"):
                start = 1 + next(i for i, b in enumerate(newest_first) if b["id"] == params["after_id"])
            page = newest_first[start : start + int(params.get("limit", 20))]
            data = [self._batch_view(b) for b in page]
        return {
            "data": data,
            "has_more": start + len(page) < len(newest_first),
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
        }

    def _batch_results(self, bid: str):
        b = self._batches.get(bid)
        if b is None or b["lines"] is None:
            return ErrorReply(404, "not_found_error", f"no results for batch {bid}", None).response()
        self.downloads[bid] = self.downloads.get(bid, 0) + 1
        text = "".join(json.dumps(line) + "\n" for line in reversed(b["lines"]))
        if bid in self.damage:
            text = self.damage[bid](text, self.downloads[bid])
        return 200, {"content-type": "application/binary"}, text

    # ------------------------------------------------------------------ outcomes
    def _next_outcome(self, custom_id: str, params: dict, canceled: bool):
        self.attempts[custom_id] = attempt = self.attempts.get(custom_id, 0) + 1
        for rule in self.rules:
            entry = rule(custom_id, params, attempt)
            if entry is not None:
                return "canceled" if canceled and entry == "succeeded" else entry
        planned = self.plan.get(custom_id)
        if isinstance(planned, list):
            planned = self.plan[custom_id] = deque(planned)
        entry = (
            planned.popleft()
            if isinstance(planned, deque) and planned
            else (planned if planned is not None and not isinstance(planned, deque) else "succeeded")
        )
        if canceled and entry == "succeeded":
            return "canceled"
        return entry

    def _decide(self, b: dict) -> list[dict]:
        if b["lines"] is not None:
            return b["lines"]
        lines = []
        for req in b["requests"]:
            params = req["params"]
            refused = self.refused_result(params)
            if refused is not None:  # validated when processed: never reaches the model
                lines.append({"custom_id": req["custom_id"], "result": refused})
                continue
            entry = self._next_outcome(req["custom_id"], params, b["cancel"])
            if isinstance(entry, tuple) and entry[0] == "errored":
                entry = entry[1]
            if entry in ("expired", "canceled"):
                result = {"type": entry}
            elif entry == "errored" or isinstance(entry, ErrorReply):
                reply = entry if isinstance(entry, ErrorReply) else MockAnthropic.overloaded()
                _, _, payload = reply.response()
                result = {"type": "errored", "error": payload}
            else:
                if entry == "max_tokens":
                    reply = message(
                        [text_block("I will record the clause with extract_clause, quoting the")],
                        "max_tokens",
                    )
                elif entry == "succeeded":
                    reply = self._reply_for(params)
                else:
                    reply = entry(params) if callable(entry) else entry
                if isinstance(reply, ErrorReply):
                    _, _, payload = reply.response()
                    result = {"type": "errored", "error": payload}
                else:
                    msg = dict(reply)
                    msg["model"] = params.get("model", msg.get("model"))
                    msg["usage"] = msg.get("usage") or self._usage(params, msg)
                    result = {"type": "succeeded", "message": msg}
            lines.append({"custom_id": req["custom_id"], "result": result})
        b["lines"] = lines
        return lines


class _Chunks(httpx2.SyncByteStream):
    """A response body handed out in small pieces, as a network stream is."""

    def __init__(self, data: bytes, step: int):
        self.data, self.step = data, step

    def __iter__(self):
        for i in range(0, len(self.data), self.step):
            yield self.data[i : i + self.step]
