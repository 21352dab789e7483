"""The results file of a batch, streamed one line at a time into ``MessageBatchIndividualResponse``s.

The SDK's ``batches.results`` decodes every line with ``json.loads`` inside its generator, so one
line that cannot be read ends the stream with an exception: the harvest would stop there at every
poll, indefinitely, and no line after it would be stored. Here a whole line (ended by its newline)
that is not a result is counted in ``unreadable``, logged and passed over; its request then has
no line, and the harvest sends it to the next batch. A last line cut off before its newline that
does not decode is a download that broke: ``Truncated`` is raised, and the next poll downloads
the file again (nothing of the line is guessed).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from typing import Any

from anthropic.types.messages import MessageBatchIndividualResponse

log = logging.getLogger(__name__)


class Truncated(ValueError):
    """The results file ended in the middle of a line."""


def read_line(raw: bytes) -> MessageBatchIndividualResponse | None:
    """One line as the SDK would give it; None when it is not a result (not JSON, or no
    ``custom_id`` and ``result.type``)."""
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not (
        isinstance(data, dict)
        and isinstance(data.get("custom_id"), str)
        and isinstance(data.get("result"), dict)
        and isinstance(data["result"].get("type"), str)
    ):
        return None
    return MessageBatchIndividualResponse.construct(**data)


class ResultLines:
    """Iterates over the results of ``chunks`` (the body's bytes, in any pieces); ``close()`` closes
    ``response`` (the HTTP response the bytes come from)."""

    def __init__(self, chunks: Iterable[bytes], response: Any = None, *, batch_id: str = ""):
        self.chunks, self.response, self.batch_id = chunks, response, batch_id
        self.unreadable = 0

    def __iter__(self) -> Iterator[MessageBatchIndividualResponse]:
        buf = b""
        for chunk in self.chunks:
            buf += chunk
            *whole, buf = buf.split(b"\n")
            for raw in whole:
                line = self._line(raw)
                if line is not None:
                    yield line
        if buf.strip():
            line = read_line(buf)
            if line is None:
                raise Truncated(
                    f"the results file of {self.batch_id or 'the batch'} was cut off in the middle "
                    f"of a line ({len(buf)} bytes)"
                )
            yield line

    def _line(self, raw: bytes) -> MessageBatchIndividualResponse | None:
        if not raw.strip():
            return None
        line = read_line(raw)
        if line is None:
            self.unreadable += 1
            log.warning(
                "results of %s: a line that is not a result was passed over: %r", self.batch_id, raw[:200]
            )
        return line

    def close(self) -> None:
        if self.response is not None:
            self.response.close()


def stream(client, batch_id: str) -> ResultLines:
    """The batch's results file, from the API (the SDK's request, its bytes read here)."""
    decoder = client.messages.batches.results(batch_id)
    response = decoder.http_response
    return ResultLines(response.iter_bytes(), response, batch_id=batch_id)
