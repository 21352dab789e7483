"""A value worth keeping in the cache (Redis), computed again when the cache is away.

The review page reads a document's section table, page labels and glyph boxes through here: with Redis
down, a signed-in reviewer keeps working, each of them computed on every request instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TypeVar

import redis
from django.core.cache import cache

log = logging.getLogger(__name__)
T = TypeVar("T")


def kept(key: str, compute: Callable[[], T], timeout: int) -> T:
    """``cache[key]``, or ``compute()`` kept there for ``timeout`` seconds (never ``None``)."""
    try:
        value = cache.get(key)
    except (redis.RedisError, OSError) as exc:
        log.warning("cache unavailable, %s computed again: %s", key.split(":", 1)[0], exc)
        return compute()
    if value is not None:
        return value
    value = compute()
    try:
        cache.set(key, value, timeout)
    except (redis.RedisError, OSError):
        pass
    return value


def kept_many(computes: Mapping[str, Callable[[], T]], timeout: int) -> dict[str, T]:
    """``kept`` of several keys at once: one round trip to read them, one to keep those computed."""
    try:
        found = cache.get_many(list(computes))
    except (redis.RedisError, OSError) as exc:
        log.warning("cache unavailable, %d values computed again: %s", len(computes), exc)
        return {key: compute() for key, compute in computes.items()}
    missing = {key: compute() for key, compute in computes.items() if found.get(key) is None}
    if missing:
        try:
            cache.set_many(missing, timeout)
        except (redis.RedisError, OSError):
            pass
    return {**found, **missing}
