"""Clause-click fragment under load: server time p50/p95 with 50 concurrent reviewers; SQL per fragment.

A real server (gunicorn, sync workers) on a throw-away embedded PostgreSQL + Redis serves a
200-page contract with ~50 clauses (2 citations each, a review history on each). A second
process on loopback plays ``--reviewers`` signed-in auditors, each clicking clauses at random
(``GET /documents/<d>/clauses/<e>/`` with ``HX-Request: true``: the fragment htmx swaps in),
closed loop, with ``--think-ms`` between clicks (0: as fast as the server answers).

* ``server_ms``: gunicorn's own request time (access log ``%(D)s``: from the worker taking the
  request to the response written; time waiting in the listen backlog is not in it);
* ``client_ms``: what a reviewer waits, queueing included;
* ``view_ms`` / ``view_cpu_ms``: the view's own wall and CPU time (its ``Server-Timing`` header),
  which tells work from waiting for a CPU when the machine is shared;
* ``load_average``: the machine's 1-minute load before and after (other work on it shows here);
* ``queries_per_fragment``: SQL statements for one fragment (Django test client, same data).
Target: server p95 ≤ 50 ms.

Baseline, in each scenario: the sign-in page (``GET /accounts/login/``, a form rendered from a
template, no database work) served by the same gunicorn to the same number of visitors with the
same think time for as long, right after the fragment's run. ``slowdown_vs_login_page`` is the
fragment's p50/p95 over the sign-in page's (server and client; > 1: slower), so the fragment's
own work reads apart from what any request costs on this machine at that moment. The visitors
are anonymous (a signed-in one is sent home from that page), so the ratio also holds the
session and user lookups a reviewer's request makes.

Usage: ``python -m bench.bench_review_fragment [--reviewers 50] [--seconds 20] [--workers <cpus>]
[--think-ms 0 2000]``  (prints one JSON object)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_P95_MS = 50.0
LOGIN_URL = "/accounts/login/"


# --------------------------------------------------------------------------- data


def seed(reviewers: int, pages: int, extra_clauses: int) -> dict:
    """A 200-page contract with its clauses, reviews, and one session per reviewer."""
    from django.contrib.auth import get_user_model
    from django.utils.text import slugify

    from bench._django import session_key
    from engagements.models import Engagement, Membership
    from extraction.models import Citation, ClauseType, Extraction
    from reviewer.models import Review
    from tests.factories import make_reviewable

    engagement = Engagement.objects.create(name="Bench audit", client="Bench")
    contract = make_reviewable(engagement, pages=pages, seed=11)
    doc = contract.document
    rng = random.Random(7)
    chunks = contract.chunks
    types = list(ClauseType.objects.order_by("name")[:extra_clauses])
    for ct in types:  # more clauses, citing paragraphs all over the document
        picked = rng.sample(chunks, 2)
        ex = Extraction.objects.create(
            run=contract.extractions["Governing Law"].run,
            document=doc,
            clause_type=ct,
            status="found",
            engine="offline",
            clause_text=picked[0].text,
            dedupe_key=f"bench-{slugify(ct.name)[:50]}",
        )
        for i, chunk in enumerate(picked):
            start = chunk.char_start + 10
            end = min(chunk.char_end, start + 160)
            Citation.objects.create(
                extraction=ex,
                chunk=chunk,
                ordinal=i,
                page=chunk.page_start,
                start=start,
                end=end,
                quote=doc.text[start:end],
            )
    User = get_user_model()
    users = [
        User.objects.create_user(f"reviewer{i:02d}", password="bench-password-1") for i in range(reviewers)
    ]
    Membership.objects.bulk_create([Membership(user=u, engagement=engagement, role="auditor") for u in users])
    extractions = list(Extraction.objects.filter(document=doc).values_list("id", flat=True))
    for ex_id in extractions:  # a short history on every clause
        for decision in ("accept", "reject", "accept"):
            Review.objects.create(
                extraction_id=ex_id,
                reviewer=rng.choice(users),
                decision=decision,
                reason="bench",
                extraction_version=1,
            )
    sessions = [session_key(user) for user in users]
    urls = [f"/documents/{doc.pk}/clauses/{ex_id}/" for ex_id in extractions]
    return {
        "urls": urls,
        "sessions": sessions,
        "pages": pages,
        "clauses": len(extractions),
        "user": users[0].pk,
        "document_chars": len(doc.text),
    }


def queries_per_fragment(urls: list[str], user_id: int) -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(get_user_model().objects.get(pk=user_id))
    counts = []
    for url in urls[:10]:
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(url, HTTP_HX_REQUEST="true")
        assert response.status_code == 200, (url, response.status_code)
        counts.append(len(ctx.captured_queries))
    return {
        "min": min(counts),
        "max": max(counts),
        "note": "incl. session + user lookups by Django's middleware",
    }


# --------------------------------------------------------------------------- server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_gunicorn(port: int, workers: int, log: Path) -> subprocess.Popen:
    env = dict(
        os.environ,
        DEBUG="0",
        SECURE_COOKIES="0",
        LOG_LEVEL="WARNING",
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--worker-class",
            "sync",
            "--backlog",
            "2048",
            "--access-logfile",
            str(log),
            "--access-logformat",
            "%(U)s %(s)s %(D)s",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc
        except OSError as exc:
            if proc.poll() is not None:
                raise RuntimeError("gunicorn exited") from exc
            time.sleep(0.2)
    raise RuntimeError("gunicorn did not start")


def server_times(log: Path, since_line: int, prefix: str) -> tuple[list[float], int, int]:
    lines = log.read_text().splitlines()
    times, errors = [], 0
    for line in lines[since_line:]:
        m = re.match(r"(\S+) (\d{3}) (\d+)", line)
        if not m or not m.group(1).startswith(prefix):
            continue
        if m.group(2) != "200":
            errors += 1
        times.append(int(m.group(3)) / 1000.0)
    return times, errors, len(lines)


# --------------------------------------------------------------------------- load (second process)


async def _reviewer(client, urls, session, until, think_s, out, rng):
    cookies = {"sessionid": session}
    while time.monotonic() < until:
        url = rng.choice(urls)
        t0 = time.perf_counter()
        response = await client.get(
            url, headers={"HX-Request": "true", "HX-Target": "workspace"}, cookies=cookies
        )
        timing = dict(re.findall(r"(\w+);dur=([\d.]+)", response.headers.get("Server-Timing", "")))
        out.append(
            (
                (time.perf_counter() - t0) * 1000.0,
                response.status_code,
                float(timing.get("view", "nan")),
                float(timing.get("cpu", "nan")),
            )
        )
        if think_s:
            await asyncio.sleep(think_s * (0.5 + rng.random()))


async def _load(base: str, urls, sessions, seconds: float, think_ms: float) -> dict:
    import httpx

    out: list[tuple[float, int, float, float]] = []
    limits = httpx.Limits(max_connections=len(sessions), max_keepalive_connections=len(sessions))
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:
        until = time.monotonic() + seconds
        started = time.monotonic()
        await asyncio.gather(
            *[
                _reviewer(client, urls, s, until, think_ms / 1000.0, out, random.Random(i))
                for i, s in enumerate(sessions)
            ]
        )
        elapsed = time.monotonic() - started
    return {
        "latencies": [row[0] for row in out],
        "errors": sum(1 for row in out if row[1] != 200),
        "view_ms": [row[2] for row in out if row[2] == row[2]],
        "cpu_ms": [row[3] for row in out if row[3] == row[3]],
        "elapsed_s": elapsed,
    }


def load_main(spec_json: str) -> None:
    spec = json.loads(spec_json)
    result = asyncio.run(
        _load(spec["base"], spec["urls"], spec["sessions"], spec["seconds"], spec["think_ms"])
    )
    print(json.dumps(result))


def run_load(base, urls, sessions, seconds, think_ms) -> dict:
    spec = json.dumps(
        {"base": base, "urls": urls, "sessions": sessions, "seconds": seconds, "think_ms": think_ms}
    )
    proc = subprocess.run(
        [sys.executable, "-m", "bench.bench_review_fragment", "--load", spec],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=seconds + 120,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- main


def scenario(think_ms: float, client: dict, server_ms: list[float], server_errors: int) -> dict:
    """One scenario's figures from the load process's answers (``client``) and the access log's.
    A failed click shows in both, so ``errors`` counts the answers reviewers got that were not 200,
    and ``server_errors`` the log's (the two differ only when a request never reached a worker)."""
    from bench._django import percentiles

    figures = load_figures(client, server_ms, server_errors)
    return {
        "think_ms": think_ms,
        **figures,
        "view_ms": percentiles(client["view_ms"]),
        "view_cpu_ms": percentiles(client["cpu_ms"]),
        "meets_target": figures["server_ms"]["p95_ms"] <= TARGET_P95_MS,
    }


def load_figures(client: dict, server_ms: list[float], server_errors: int) -> dict:
    """Requests, errors, throughput and latencies of one load run (any page)."""
    from bench._django import percentiles

    return {
        "requests": len(client["latencies"]),
        "errors": client["errors"],
        "server_errors": server_errors,
        "throughput_rps": round(len(client["latencies"]) / client["elapsed_s"], 1),
        "server_ms": percentiles(server_ms),
        "client_ms": percentiles(client["latencies"]),
    }


def slowdown_vs_baseline(fragment: dict, baseline: dict) -> dict:
    """Fragment ms / baseline ms (> 1: the fragment is slower), server's and client's p50 and p95."""
    from bench._django import ratio

    return {
        f"{side}_{q}": ratio(fragment[f"{side}_ms"][f"{q}_ms"], baseline[f"{side}_ms"][f"{q}_ms"])
        for side in ("server", "client")
        for q in ("p50", "p95")
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviewers", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--extra-clauses", type=int, default=44)
    parser.add_argument("--think-ms", type=float, nargs="+", default=[0, 2000])
    parser.add_argument("--load", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.load:
        load_main(args.load)
        return {}

    from bench._django import bench_django

    load_before = round(os.getloadavg()[0], 2)

    with bench_django("review") as folder:
        data = seed(args.reviewers, args.pages, args.extra_clauses)
        queries = queries_per_fragment(data["urls"], data["user"])
        from django.db import connections

        connections.close_all()
        port, log = free_port(), Path(folder) / "gunicorn-access.log"
        server = start_gunicorn(port, args.workers, log)
        base = f"http://127.0.0.1:{port}"
        scenarios = []
        try:
            run_load(base, data["urls"], data["sessions"], 3, 0)  # warm-up: imports, connections, templates
            mark = len(log.read_text().splitlines())
            for think in args.think_ms:
                client = run_load(base, data["urls"], data["sessions"], args.seconds, think)
                time.sleep(0.5)
                server_ms, errors, mark = server_times(log, mark, "/documents/")
                figures = scenario(think, client, server_ms, errors)
                anonymous = [""] * len(data["sessions"])  # no session cookie: the page renders its form
                client = run_load(base, [LOGIN_URL], anonymous, args.seconds, think)
                time.sleep(0.5)
                server_ms, errors, mark = server_times(log, mark, LOGIN_URL)
                figures["baseline_login_page"] = load_figures(client, server_ms, errors)
                figures["slowdown_vs_login_page"] = slowdown_vs_baseline(
                    figures, figures["baseline_login_page"]
                )
                scenarios.append(figures)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(20)
    result = {
        "benchmark": "review_fragment",
        "fragment": "GET /documents/<d>/clauses/<e>/ (HX-Request: true)",
        "reviewers": args.reviewers,
        "gunicorn_workers": args.workers,
        "cpu_count": os.cpu_count(),
        "document": {"pages": data["pages"], "chars": data["document_chars"], "clauses": data["clauses"]},
        "queries_per_fragment": queries,
        "target_server_p95_ms": TARGET_P95_MS,
        "load_average_1m": {"before": load_before, "after": round(os.getloadavg()[0], 2)},
        "scenarios": scenarios,
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
