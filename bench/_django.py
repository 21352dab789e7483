"""Django on a throw-away embedded PostgreSQL + Redis for one benchmark process.

``with bench_django("search") as folder:`` starts services under ``var/bench/search-<pid>``
(unless ``DATABASE_URL`` is set), migrates, and removes the folder afterwards.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def bench_django(tag: str, *, keep: bool = False):
    folder = ROOT / "var" / "bench" / f"{tag}-{os.getpid()}"
    os.environ.setdefault("EMBEDDED_DIR", str(folder))
    os.environ.setdefault("MEDIA_ROOT", str(folder / "media"))
    os.environ.setdefault("CACHE_PREFIX", f"bench{os.getpid()}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    try:
        yield folder
    finally:
        from django.db import connections

        connections.close_all()
        if not keep and Path(os.environ["EMBEDDED_DIR"]) == folder:
            from config import embedded

            embedded.remove(folder)


def percentiles(samples_ms: list[float]) -> dict:
    """p50/p95/max of latencies in milliseconds (nearest-rank)."""
    ordered = sorted(samples_ms)
    pick = lambda q: ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]  # noqa: E731
    return {
        "p50_ms": round(pick(0.50), 2),
        "p95_ms": round(pick(0.95), 2),
        "max_ms": round(ordered[-1], 2),
        "n": len(ordered),
    }


def timed_repeats(run, repeat: int) -> tuple[dict, object]:
    """``run()`` ``repeat`` times: the percentiles of its wall time and its last result."""
    samples, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = run()
        samples.append((time.perf_counter() - started) * 1000)
    return percentiles(samples), result


def ratio(numerator: float | None, denominator: float | None, digits: int = 2) -> float | None:
    """``numerator / denominator`` rounded, for a bench's ratio against its baseline; None when a
    side is missing or the denominator is 0 (a figure too small to divide by is no ratio)."""
    if numerator is None or not denominator:
        return None
    return round(numerator / denominator, digits)


def speedup(baseline: dict, ours: dict) -> dict:
    """How many times faster ``ours`` is than ``baseline`` (baseline ms / our ms; > 1: faster), for
    each of p50/p95 and, where both have it, CPU p50/p95, from two :func:`percentiles`-style dicts."""
    keys = ("p50_ms", "p95_ms", "cpu_p50_ms", "cpu_p95_ms")
    return {
        key.replace("_ms", ""): ratio(baseline[key], ours[key])
        for key in keys
        if key in baseline and key in ours
    }


def session_key(user) -> str:
    """A signed-in session of ``user`` made in the database (no sign-in request), for a load client's cookie."""
    from django.contrib.sessions.backends.db import SessionStore

    store = SessionStore()
    store["_auth_user_id"] = str(user.pk)
    store["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
    store["_auth_user_hash"] = user.get_session_auth_hash()
    store.create()
    return store.session_key


def write_result(result: dict, path) -> None:
    """Print a bench's JSON and keep it at ``path`` (``bench/results/...``)."""
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")
