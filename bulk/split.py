"""Split requests into batches at the API's limits. Pure.

A Message Batch holds at most 100,000 requests or 256 MB, whichever comes first.
Sizes are counted the way the SDK sends the body (``{"requests":[...]}``, compact
separators, UTF-8, no ASCII escaping), so a batch closed here is never refused
for its size. "256 MB" is read as 256,000,000 bytes, the stricter reading.

``Splitter`` is fed one request (its size, and whatever stands for it) at a time and
hands back a group whenever adding the next request would cross a limit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

MAX_REQUESTS = 100_000
MAX_BYTES = 256_000_000
ENVELOPE_BYTES = len(b'{"requests":[]}')

T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    max_requests: int = MAX_REQUESTS
    max_bytes: int = MAX_BYTES

    def __post_init__(self):
        if self.max_requests < 1 or self.max_bytes <= ENVELOPE_BYTES:
            raise ValueError("batch limits must allow at least one request")


API_LIMITS = Limits()


class RequestTooLarge(ValueError):
    """One request alone is over the size limit: it can never be sent in a batch."""


def encode(request: Any) -> bytes:
    """``request`` as the SDK encodes it in the body it sends (same encoder settings)."""
    return json.dumps(request, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def encoded_size(request: Any) -> int:
    """Bytes ``request`` takes in the body the SDK sends."""
    return len(encode(request))


def body_size(sizes: Iterable[int]) -> int:
    """Bytes of ``{"requests":[...]}`` holding requests of these sizes."""
    sizes = list(sizes)
    return ENVELOPE_BYTES + sum(sizes) + max(0, len(sizes) - 1)


@dataclass
class Splitter(Generic[T]):
    """Greedy, order-keeping grouping of items under ``limits``."""

    limits: Limits = API_LIMITS
    _items: list = field(default_factory=list)
    _bytes: int = ENVELOPE_BYTES

    def fits_alone(self, size: int) -> bool:
        return ENVELOPE_BYTES + size <= self.limits.max_bytes

    def add(self, item: T, size: int) -> list[T] | None:
        """Add one item of ``size`` bytes; returns the group it closed (or None)."""
        if not self.fits_alone(size):
            raise RequestTooLarge(
                f"a request of {size:,} bytes is over the batch limit of {self.limits.max_bytes:,} bytes"
            )
        extra = size + (1 if self._items else 0)
        closed = None
        if self._items and (
            len(self._items) >= self.limits.max_requests or self._bytes + extra > self.limits.max_bytes
        ):
            closed = self.flush()
            extra = size
        self._items.append(item)
        self._bytes += extra
        return closed

    def flush(self) -> list[T] | None:
        """The group being filled (None when empty); starts a new one."""
        if not self._items:
            return None
        group, self._items, self._bytes = self._items, [], ENVELOPE_BYTES
        return group


def split(sized: Iterable[tuple[T, int]], limits: Limits = API_LIMITS) -> Iterator[list[T]]:
    """Groups of ``(item, size)`` pairs, each within ``limits``; order kept."""
    splitter: Splitter[T] = Splitter(limits)
    for item, size in sized:
        group = splitter.add(item, size)
        if group:
            yield group
    last = splitter.flush()
    if last:
        yield last
