"""Faults and limits, probed on a running local stack: hostile uploads, kill -9 of its processes, reviewers.

The stack is `make run`'s (``scripts/run_stack.py``: gunicorn web, worker, worker-large, beat, under its
supervisor; embedded PostgreSQL and Redis) in a throw-away folder under /tmp with its own port, without the
demo data (:mod:`bench.faults.supervise`), the offline extraction engine, and a visibility timeout of
``--visibility-timeout`` s (production's 3,700 s would make a killed worker's stage wait an hour to come back).
Everything goes through its real views over loopback, as a browser would (sign-in form, upload form as htmx
sends it, the review pages and the decision form).

1. **Hostile files** (:mod:`bench.faults.hostile`), one upload each: the HTTP status, what the page says of
   each file, what became of each document taken (ready, or failed and the words it says), the worker's
   main process still the same one after each, and the peak memory (RSS) of the worker's pool processes
   while the file was processed. Never a 500.
2. **kill -9** of the worker, the beat, Redis, the web (gunicorn's main process and its workers) and one web
   worker, each once mid-ingest and once mid-extraction of a batch of contracts uploaded with "extract"
   ticked, while a reviewer goes on deciding: documents ready / failed / stuck once the batch settles,
   duplicated extractions, decisions answered 200 that no Review row holds (targets 0, 0, 0), how long until
   the web serves a signed-in page again and until the killed process runs again, and what started it again.
   The supervisor restarts a worker, the beat, the web (gunicorn's main process, once it has served) and the
   embedded Redis; where nothing does, the bench does what a person would (`make run` again,
   :meth:`LocalStack.start`) and says so.
3. **Reviewers**: ``--reviewers`` signed-in auditors open the document page, a clause, and decide, closed loop
   for ``--seconds``: p50/p95 of each page, and decisions answered 200 == new Review rows.

The stack's processes load the code as they start, and a killed one starts again: on a tree others are
editing meanwhile, ``--snapshot`` runs the whole bench (this process and the stack) from a copy of the tree
taken as it starts, so every process runs the same code against the schema it migrated.

Prints one JSON object and writes ``bench/results/bench_faults.json``.
Usage: ``python -m bench.bench_faults [--quick] [--snapshot] [--keep] [--phases hostile kills reviewers]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.faults import hostile  # noqa: E402
from bench.faults.client import session_client, signed_in, upload  # noqa: E402
from bench.faults.stack import LocalStack  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "bench_faults.json"
PASSWORD = "faults-bench-password-1"
BUSY = ("queued", "converting", "chunking", "embedding", "indexing")
LIVE_SCRIPT = ("<script>alert(", "<img src=x onerror", 'onerror="alert', 'onload="alert', 'href="javascript:')


# --------------------------------------------------------------------------- Django in this process


def django_on(stack: LocalStack) -> None:
    """This process reads and seeds the stack's database; it never starts a service of its own (the URLs
    are given, so config.embedded leaves them alone)."""
    from config import embedded

    var = stack.root / "var"
    os.environ.update(
        EMBEDDED_DIR=str(var),
        MEDIA_ROOT=str(stack.root / "media"),
        DATABASE_URL=embedded.postgres_url(var, start=False),
        REDIS_URL=embedded.redis_url(var, start=False),
        DJANGO_SETTINGS_MODULE="config.settings",
        LOG_LEVEL="WARNING",
    )
    import django

    django.setup()


def db(call, attempts: int = 60):
    """``call()`` with a fresh connection after a failure (the database restarted with the stack)."""
    from django.db import connections

    for attempt in range(attempts):
        try:
            return call()
        except Exception:
            connections.close_all()
            if attempt == attempts - 1:
                raise
            time.sleep(1)
    return None


def seed(reviewers: int) -> dict:
    from django.contrib.auth import get_user_model

    from bench._django import session_key
    from engagements.models import Engagement, Membership, Role
    from extraction.models import Extraction
    from tests.factories import make_reviewable

    User = get_user_model()
    admin = User.objects.create_user("faults-admin", password=PASSWORD)
    engagements = {
        name: Engagement.objects.create(name=f"Faults: {name}", client="Bench")
        for name in ("hostile", "kills", "review")
    }
    for engagement in engagements.values():
        Membership.objects.create(user=admin, engagement=engagement, role=Role.ADMIN)
    contract = make_reviewable(engagements["review"], pages=30, seed=17)
    users = [
        User.objects.create_user(f"faults-reviewer{i:02d}", password=PASSWORD) for i in range(reviewers + 1)
    ]
    Membership.objects.bulk_create(
        [Membership(user=u, engagement=engagements["review"], role=Role.AUDITOR) for u in users]
    )
    sessions = {user.pk: session_key(user) for user in users}
    clauses = list(Extraction.objects.filter(document=contract.document).values_list("id", flat=True))
    return {
        "engagements": {name: e.pk for name, e in engagements.items()},
        "document": contract.document.pk,
        "clauses": clauses,
        "sessions": sessions,
    }


# --------------------------------------------------------------------------- memory


class MemorySampler(threading.Thread):
    """RSS of the workers' pool processes every 0.2 s: the largest one process held, and all of them together,
    since :meth:`window` was last called."""

    def __init__(self, stack: LocalStack):
        super().__init__(daemon=True)
        self.stack, self.stopping = stack, threading.Event()
        self.child_peak = self.total_peak = 0

    def run(self) -> None:
        while not self.stopping.is_set():
            sizes = []
            for proc in self.stack.worker_children():
                try:
                    sizes.append(proc.memory_info().rss)
                except Exception:  # noqa: BLE001 - a child that just ended
                    pass
            if sizes:
                self.child_peak = max(self.child_peak, max(sizes))
                self.total_peak = max(self.total_peak, sum(sizes))
            time.sleep(0.2)

    def window(self) -> dict:
        out = {"child_mb": round(self.child_peak / 2**20), "all_children_mb": round(self.total_peak / 2**20)}
        self.child_peak = self.total_peak = 0
        return out


# --------------------------------------------------------------------------- documents


def documents_after(engagement_id: int, last_pk: int) -> list:
    from ingest.models import Document

    return list(
        Document.objects.filter(engagement_id=engagement_id, pk__gt=last_pk).defer("text").order_by("pk")
    )


def last_document_pk() -> int:
    from ingest.models import Document

    return Document.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def wait_settled(ids: list[int], timeout: float, *, extraction: bool = False) -> float:
    """Seconds until every document is terminal (and, with ``extraction``, every ready one extracted), or
    ``timeout`` if some never were."""
    from extraction.models import ClauseTask
    from ingest.models import Document

    started = time.monotonic()

    def settled() -> bool:
        rows = Document.objects.filter(pk__in=ids).values_list("pk", "status")
        if any(status not in Document.TERMINAL for _, status in rows):
            return False
        if not extraction:
            return True
        ready = [pk for pk, status in rows if status == "ready"]
        tasks = ClauseTask.objects.filter(document_id__in=ready)
        return (
            set(tasks.values_list("document_id", flat=True)) == set(ready)
            and not tasks.filter(status__in=("pending", "running")).exists()
        )

    while not db(settled):
        if time.monotonic() - started > timeout:
            return timeout
        time.sleep(1)
    return time.monotonic() - started


# --------------------------------------------------------------------------- 1. hostile files


def worker_identity(stack: LocalStack) -> dict:
    return {name: proc.pid for name, proc in stack.processes().items() if name.startswith("worker")}


def restarts(stack: LocalStack) -> int:
    return stack.log_text().count("exited with code")


def live_script(text: str) -> list[str]:
    return [pattern for pattern in LIVE_SCRIPT if pattern in text]


def probe_file(stack, admin, sampler, data, case: hostile.Case, folder: Path, timeout: float) -> dict:
    from ingest.models import Document

    engagement = data["engagements"]["hostile"]
    folder.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    files = case.build(folder)
    built_s = time.monotonic() - started
    before, restarted = worker_identity(stack), restarts(stack)
    last = db(last_document_pk)
    escape_before = Path("/tmp/escape-absolute.txt").exists()
    sampler.window()
    answer = upload(admin, engagement, files)
    taken = db(lambda: documents_after(engagement, last))
    settle_s = wait_settled([d.pk for d in taken], timeout)
    memory = sampler.window()
    rows = db(lambda: list(Document.objects.filter(pk__in=[d.pk for d in taken]).order_by("pk")))
    record: dict = {
        "case": case.name,
        "what": case.what,
        "files": len(files),
        "bytes": sum(path.stat().st_size for _, path in files),
        "zip_parts": sum(
            len(zipfile.ZipFile(path).infolist()) for _, path in files if zipfile.is_zipfile(path)
        ),
        "built_s": round(built_s, 1),
        "http": answer.status,
        "upload_s": round(answer.seconds, 2),
        "said": answer.alert or [said for _, _, said in answer.lines][:3],
        "taken": sum(ok for ok, _, _ in answer.lines),
        "documents": [
            {
                "name": row.original_name[:80],
                "status": row.status,
                "error_code": row.error_code,
                "error": row.error[:300],
                "pages": row.page_count,
                "chunks": row.chunks.count(),
            }
            for row in rows
        ],
        "settle_s": round(settle_s, 1),
        "worker_peak_rss": memory,
        "worker_alive": worker_identity(stack) == before and restarts(stack) == restarted,
    }
    refused = not answer.lines or not any(ok for ok, _, _ in answer.lines)
    told_at_upload = refused and (answer.alert or all(said for _, _, said in answer.lines)) and not rows
    ready = bool(rows) and all(row.status == "ready" for row in rows)
    failed_in_words = bool(rows) and all(row.status in ("failed", "needs_ocr") and row.error for row in rows)
    mixed_in_words = bool(rows) and all(
        row.status == "ready" or (row.status in ("failed", "needs_ocr") and row.error) for row in rows
    )
    outcome = (
        "refused"
        if told_at_upload
        else "ready"
        if ready
        else "failed"
        if failed_in_words
        else "some ready, others failed"
        if mixed_in_words
        else "unclear"
    )
    expected = {
        "refused": outcome == "refused",
        "ready": outcome == "ready",
        "told": outcome in ("refused", "failed"),
        "handled": outcome != "unclear",
    }[case.expect]
    problems = []
    if answer.status >= 500:
        problems.append(f"HTTP {answer.status}")
    if not expected:
        problems.append(f"expected {case.expect}, got {outcome}")
    if not record["worker_alive"]:
        problems.append("the worker died")
    if settle_s >= timeout:
        problems.append("a document did not settle")
    if case.check == "secret":
        leaked = db(lambda: Document.objects.filter(text__contains=hostile.SECRET_MARK).count())
        if leaked:
            problems.append(f"{hostile.SECRET_FILE} in {leaked} document(s)")
    if case.check == "escape":
        outside = [str(p) for p in stack.root.rglob("escape-*") if "media" not in p.parts]
        if outside or (Path("/tmp/escape-absolute.txt").exists() and not escape_before):
            problems.append(f"written outside the media folder: {outside or '/tmp/escape-absolute.txt'}")
        if db(lambda: Document.objects.filter(text__contains=hostile.SECRET_MARK).exists()):
            problems.append("a symbolic link was followed")
    if case.check == "script":
        pages = [f"/engagements/{engagement}/upload/"] + [f"/documents/{row.pk}/" for row in rows]
        pages += [f"/documents/{row.pk}/pages/1/" for row in rows if row.status == "ready"]
        shown = {page: admin.get(page).status_code for page in pages}
        found = live_script(answer_text := "".join(admin.get(page).text for page in pages))
        record["pages_checked"] = shown
        if found or any(status >= 500 for status in shown.values()):
            problems.append(f"live markup on a page: {found}; statuses {shown}")
        del answer_text
    record["outcome"] = outcome
    record["expected"] = case.expect
    record["problems"] = problems
    record["ok"] = not problems
    for _, path in files:  # the large ones take the disk of others
        path.unlink(missing_ok=True)
    return record


def hostile_phase(stack, data, cases, timeout) -> dict:
    admin = signed_in(stack.base, "faults-admin", PASSWORD)
    sampler = MemorySampler(stack)
    sampler.start()
    records = []
    try:
        for case in cases:
            print(f"hostile: {case.name}...", file=sys.stderr, flush=True)
            record = probe_file(stack, admin, sampler, data, case, stack.root / "files" / case.name, timeout)
            print(f"  {record['outcome']} {record['problems'] or 'ok'}", file=sys.stderr, flush=True)
            records.append(record)
    finally:
        sampler.stopping.set()
    taken = [r for r in records if any(d["status"] == "ready" for d in r["documents"])]
    largest = sorted(taken, key=lambda r: r["bytes"], reverse=True)[:4]
    return {
        "cases": len(records),
        "ok": sum(r["ok"] for r in records),
        "http_500": sum(r["http"] >= 500 for r in records),
        "worker_deaths": sum(not r["worker_alive"] for r in records),
        "problems": {r["case"]: r["problems"] for r in records if r["problems"]},
        "peak_worker_child_rss_mb": max((r["worker_peak_rss"]["child_mb"] for r in records), default=0),
        "largest_accepted": [
            {"case": r["case"], "bytes": r["bytes"], "peak_rss": r["worker_peak_rss"]} for r in largest
        ],
        "records": records,
    }


# --------------------------------------------------------------------------- 2. kills


class Decider(threading.Thread):
    """One reviewer deciding clauses while a fault happens: each answer counted by its status."""

    def __init__(self, stack: LocalStack, data: dict, user_id: int, seed: int):
        super().__init__(daemon=True)
        self.stack, self.data, self.user_id = stack, data, user_id
        self.rng = random.Random(seed)
        self.stopping = threading.Event()
        self.answers: Counter = Counter()
        self.decided = 0  # decisions answered 200: the reviewer saw "saved"

    def run(self) -> None:
        client = session_client(self.stack.base, self.data["sessions"][self.user_id], timeout=10)
        while not self.stopping.is_set():
            try:
                status = decide_once(client, self.data, self.rng)
            except Exception as exc:  # noqa: BLE001 - the server down is what is measured
                self.answers[type(exc).__name__] += 1
                time.sleep(0.2)
                continue
            self.answers[status] += 1
            self.decided += status == 200
            time.sleep(0.1)


def decide_once(client, data, rng, latencies: dict | None = None) -> int:
    """Open a clause (the fragment htmx swaps in) and decide it as seen; the decision's HTTP status."""
    doc, clause = data["document"], rng.choice(data["clauses"])
    started = time.perf_counter()
    page = client.get(f"/documents/{doc}/clauses/{clause}/", headers={"HX-Request": "true"})
    if latencies is not None:
        latencies["clause"].append((time.perf_counter() - started) * 1000)
        latencies["status"][f"clause {page.status_code}"] += 1
    if page.status_code != 200:
        return page.status_code
    seen_review = re.search(r'name="seen_review" value="(\d*)"', page.text)
    seen_version = re.search(r'name="seen_version" value="(\d+)"', page.text)
    started = time.perf_counter()
    answer = client.post(
        f"/documents/{doc}/clauses/{clause}/decide/",
        data={
            "decision": rng.choice(("accept", "reject")),
            "reason": "bench decision",
            "corrected_text": "",
            "seen_review": (seen_review.group(1) if seen_review else "") or "0",
            "seen_version": seen_version.group(1) if seen_version else "1",
        },
        headers={"HX-Request": "true"},
    )
    if latencies is not None:
        latencies["decide"].append((time.perf_counter() - started) * 1000)
        latencies["status"][f"decide {answer.status_code}"] += 1
    return answer.status_code


def reviews_by(user_ids, since) -> int:
    from reviewer.models import Review

    return Review.objects.filter(reviewer_id__in=user_ids, created_at__gte=since).count()


def batch_files(folder: Path, seeds: list[int], pages: int) -> list[tuple[str, Path]]:
    folder.mkdir(parents=True, exist_ok=True)
    return [
        (f"msa-{s}.pdf", hostile.pdf_contract(folder, f"msa-{s}.pdf", pages=pages, seed=s)) for s in seeds
    ]


def wait_moment(ids: list[int], moment: str, timeout: float = 600) -> bool:
    """Until the batch is mid-ingest (a document converting, chunking or embedding) or mid-extraction (a
    clause task running); False if it never was within ``timeout``."""
    from extraction.models import ClauseTask
    from ingest.models import Document

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if moment == "ingest":
            now = db(
                lambda: Document.objects.filter(
                    pk__in=ids, status__in=("converting", "chunking", "embedding", "indexing")
                ).exists()
            )
        else:
            now = db(lambda: ClauseTask.objects.filter(document_id__in=ids, status="running").exists())
        if now:
            return True
        time.sleep(0.2)
    return False


def home_serves(client) -> bool:
    try:
        return client.get("/", timeout=3).status_code == 200
    except Exception:  # noqa: BLE001 - down
        return False


class WebWatch(threading.Thread):
    """A signed-in page asked for every 0.25 s from a fault on: when the web last failed to answer 200, so
    how long it took to serve again (0 when it never stopped serving)."""

    def __init__(self, client, since: float):
        super().__init__(daemon=True)
        self.client, self.since = client, since
        self.stopping = threading.Event()
        self.failures = 0
        self.last_failure: float | None = None
        self.answers = 0

    def run(self) -> None:
        while not self.stopping.is_set():
            asked = time.monotonic()
            if home_serves(self.client):
                self.answers += 1
            else:
                self.failures += 1
                self.last_failure = time.monotonic()
            time.sleep(max(0.0, 0.25 - (time.monotonic() - asked)))

    def figures(self) -> dict:
        back = 0.0 if self.last_failure is None else round(self.last_failure - self.since, 2)
        return {"web_serves_again_s": back, "web_failed_checks": self.failures, "web_ok_checks": self.answers}


def wait_for(check, timeout: float) -> float | None:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if check():
            return round(time.monotonic() - started, 2)
        time.sleep(0.2)
    return None


def batch_counts(ids: list[int]) -> dict:
    from django.db.models import Count

    from extraction.models import ClauseTask, Extraction, ExtractionRun
    from ingest.models import Document

    rows = list(Document.objects.filter(pk__in=ids).values_list("status", "error_code"))
    ready = [pk for (pk,) in Document.objects.filter(pk__in=ids, status="ready").values_list("pk")]
    runs = Counter(
        ClauseTask.objects.filter(document_id__in=ids).values_list("run_id", "document_id").distinct()
    )
    runs_per_doc = Counter(doc for _, doc in runs)
    twice = (
        Extraction.objects.filter(document_id__in=ids)
        .values("document_id", "clause_type_id", "dedupe_key")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )
    open_tasks = ClauseTask.objects.filter(document_id__in=ids, status__in=("pending", "running")).count()
    return {
        "documents": len(ids),
        "ready": sum(status == "ready" for status, _ in rows),
        "failed": sum(status in ("failed", "needs_ocr") for status, _ in rows),
        "failed_codes": dict(Counter(code for status, code in rows if status == "failed")),
        "stuck": sum(status not in Document.TERMINAL for status, _ in rows),
        "extracted": sum(1 for pk in ready if runs_per_doc.get(pk)),
        "clause_tasks_open": open_tasks,
        "clause_tasks_failed": ClauseTask.objects.filter(document_id__in=ids, status="failed").count(),
        "runs_failed": ExtractionRun.objects.filter(tasks__document_id__in=ids, status="failed")
        .distinct()
        .count(),
        "duplicated_runs": sum(n - 1 for n in runs_per_doc.values() if n > 1),
        "duplicated_extractions": sum(row["n"] - 1 for row in twice),
    }


def kill_once(stack, data, admin_box, target, moment, seeds, args, decider_user) -> dict:
    engagement = data["engagements"]["kills"]
    files = batch_files(stack.root / "batches" / f"{target}-{moment}", seeds, args.pages)
    last = db(last_document_pk)
    answer = upload(admin_box[0], engagement, files, extract=True)
    ids = [d.pk for d in db(lambda: documents_after(engagement, last))]
    record: dict = {"target": target, "moment": moment, "upload_http": answer.status, "documents": len(ids)}
    if not wait_moment(ids, moment):
        record["error"] = f"the batch was never mid-{moment}"
        return record
    from django.utils import timezone

    since = db(timezone.now)
    decider = Decider(stack, data, decider_user, seed=len(target) + len(moment))
    decider.start()
    time.sleep(1)  # a few decisions before the fault
    before = {name: proc.pid for name, proc in stack.processes().items()}
    probe = session_client(stack.base, data["sessions"][decider_user], timeout=3)
    killed_at = time.monotonic()
    web = WebWatch(probe, killed_at)
    web.start()
    record["killed_pids"] = stack.kill(target)
    restarted_by = {
        "worker": "the supervisor (scripts/run_stack.py)",
        "beat": "the supervisor (scripts/run_stack.py)",
        "web-worker": "gunicorn's main process",
    }.get(target, "")
    if target == "web":
        restarted_by = "the supervisor (scripts/run_stack.py)"
    if target == "redis":
        back = wait_for(lambda: stack.redis_pid() is not None and _redis_up(stack), args.redis_grace)
        if back is None:
            record["redis_back_by_itself_within_s"] = None
            record["web_serves_with_redis_down"] = home_serves(probe)
            stack.stop()
            record["restart_s"] = round(stack.start(), 2)
            restarted_by = (
                f"nothing within {args.redis_grace:g} s; the bench ran `make run` again (make stop, make run)"
            )
            admin_box[0] = signed_in(stack.base, "faults-admin", PASSWORD)
        else:
            restarted_by = "the supervisor (scripts/run_stack.py, RedisWatch)"
            record["redis_back_s"] = back
    record["restarted_by"] = restarted_by
    wait_for(lambda: home_serves(probe), 300)
    if target in ("worker", "beat", "web"):
        back = wait_for(lambda: replaced(stack, target, before.get(target)), 180)
        record["process_back_s"] = None if back is None else round(time.monotonic() - killed_at, 2)
    settle = wait_settled(ids, args.settle, extraction=True)
    record["settled_s"] = None if settle >= args.settle else round(time.monotonic() - killed_at, 1)
    decider.stopping.set()
    web.stopping.set()
    decider.join(30)
    web.join(10)
    record |= web.figures()
    made = decider.decided
    stored = db(lambda: reviews_by([decider_user], since))
    record |= db(lambda: batch_counts(ids))
    record["decisions_answered_200"] = made
    record["review_rows"] = stored
    record["decisions_lost"] = max(0, made - stored)
    record["decision_answers"] = dict(decider.answers)
    return record


def replaced(stack, name: str, old_pid: int | None) -> bool:
    proc = stack.processes().get(name)
    return proc is not None and proc.pid != old_pid


def _redis_up(stack) -> bool:
    from config import embedded

    return embedded._redis_ping(embedded._redis_socket((stack.root / "var").resolve()))


def kills_phase(stack, data, args) -> dict:
    admin_box = [signed_in(stack.base, "faults-admin", PASSWORD)]
    reviewers = sorted(data["sessions"])
    decider_user = reviewers[-1]  # the one the reviewers' phase does not use
    records = []
    seed = 5000
    for target in args.targets:
        for moment in args.moments:
            print(f"kill -9 {target} mid-{moment}...", file=sys.stderr, flush=True)
            seeds = list(range(seed, seed + args.batch))
            seed += args.batch
            record = kill_once(stack, data, admin_box, target, moment, seeds, args, decider_user)
            print(
                f"  {json.dumps({k: v for k, v in record.items() if k != 'decision_answers'})}",
                file=sys.stderr,
                flush=True,
            )
            records.append(record)
    keys = ("ready", "failed", "stuck", "duplicated_extractions", "duplicated_runs", "decisions_lost")
    return {
        "totals": {key: sum(r.get(key, 0) for r in records) for key in ("documents", *keys)},
        "records": records,
    }


# --------------------------------------------------------------------------- 3. reviewers


def reviewers_phase(stack, data, args) -> dict:
    from django.utils import timezone

    from bench._django import percentiles

    users = sorted(data["sessions"])[: args.reviewers]
    since = db(timezone.now)
    latencies: dict = {"document": [], "clause": [], "decide": [], "status": Counter()}
    lock = threading.Lock()
    decided = Counter()
    until = time.monotonic() + args.seconds

    def reviewer(user_id: int, index: int) -> None:
        client = session_client(stack.base, data["sessions"][user_id], timeout=30)
        rng = random.Random(index)
        mine: dict = {"document": [], "clause": [], "decide": [], "status": Counter()}
        while time.monotonic() < until:
            started = time.perf_counter()
            page = client.get(f"/documents/{data['document']}/")
            mine["document"].append((time.perf_counter() - started) * 1000)
            mine["status"][f"document {page.status_code}"] += 1
            for _ in range(3):
                if time.monotonic() >= until:
                    break
                status = decide_once(client, data, rng, mine)
                decided[status] += 1
        with lock:
            for key in ("document", "clause", "decide"):
                latencies[key].extend(mine[key])
            latencies["status"].update(mine["status"])

    threads = [threading.Thread(target=reviewer, args=(u, i)) for i, u in enumerate(users)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    stored = db(lambda: reviews_by(users, since))
    return {
        "reviewers": len(users),
        "seconds": round(elapsed, 1),
        "document_page_ms": percentiles(latencies["document"]),
        "clause_fragment_ms": percentiles(latencies["clause"]),
        "decide_ms": percentiles(latencies["decide"]),
        "answers": dict(latencies["status"]),
        "decisions_answered_200": decided[200],
        "decisions_refused_stale_409": decided[409],
        "review_rows": stored,
        "decisions_equal_rows": decided[200] == stored,
        "http_5xx": sum(n for key, n in latencies["status"].items() if key.split()[-1].startswith("5")),
    }


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: fewer files, kills and seconds")
    parser.add_argument("--phases", nargs="+", default=["hostile", "kills", "reviewers"])
    parser.add_argument("--cases", nargs="*", default=None, help="hostile case names (default: all)")
    parser.add_argument("--targets", nargs="+", default=["worker", "beat", "redis", "web", "web-worker"])
    parser.add_argument("--moments", nargs="+", default=["ingest", "extraction"])
    parser.add_argument("--batch", type=int, default=4, help="contracts uploaded before each kill")
    parser.add_argument("--pages", type=int, default=12, help="pages of each of those contracts")
    parser.add_argument("--reviewers", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--file-timeout", type=float, default=900, help="seconds a hostile file may take")
    parser.add_argument("--settle", type=float, default=600, help="seconds a batch may take after a kill")
    parser.add_argument(
        "--redis-grace", type=float, default=30, help="seconds to wait for Redis to come back"
    )
    parser.add_argument("--visibility-timeout", type=int, default=60)
    parser.add_argument("--requeue-after", type=int, default=60)
    parser.add_argument("--keep", action="store_true", help="keep the throw-away folder")
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument("--snapshot", action="store_true", help="run from a copy of the tree (see above)")
    args = parser.parse_args(argv)
    if args.snapshot:
        return from_snapshot(argv if argv is not None else sys.argv[1:], Path(args.out).resolve())
    if args.quick:
        args.targets, args.moments = ["worker", "web"], ["ingest"]
        args.batch, args.pages, args.reviewers, args.seconds = 2, 12, 5, 10
    cases = [c for c in hostile.CASES if (args.cases is None or c.name in args.cases)]
    if args.quick and args.cases is None:
        cases = [c for c in cases if c.quick and c.name in QUICK_CASES]

    root = Path(tempfile.mkdtemp(prefix="faults-", dir="/tmp"))
    stack = LocalStack(root, visibility_timeout=args.visibility_timeout, requeue_after=args.requeue_after)
    result: dict = {
        "benchmark": "faults",
        "quick": args.quick,
        "cpu_count": os.cpu_count(),
        "load_average_1m_before": round(os.getloadavg()[0], 2),
        "visibility_timeout_s": args.visibility_timeout,
        "requeue_unsent_after_s": args.requeue_after,
    }
    try:
        result["stack_start_s"] = round(stack.start(), 1)
        django_on(stack)
        data = seed(args.reviewers)
        if "hostile" in args.phases:
            result["hostile"] = hostile_phase(stack, data, cases, args.file_timeout)
        if "kills" in args.phases:
            result["kills"] = kills_phase(stack, data, args)
        if "reviewers" in args.phases:
            result["reviewers"] = reviewers_phase(stack, data, args)
        result["supervisor_log"] = [
            line
            for line in stack.log_text().splitlines()
            if "exited with code" in line or "starting again" in line
        ][-40:]
    finally:
        from django.db import connections

        connections.close_all()
        stack.stop()
        if not args.keep:
            stack.remove()
        else:
            result["folder"] = str(root)
    result["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return result


SNAPSHOT_SKIP = (".venv", "var", ".git", "*_cache", "__pycache__", "artifacts", "results", "node_modules")


def from_snapshot(argv: list[str], out: Path) -> dict:
    """This bench, run again from a copy of the tree in a throw-away folder (its results written to ``out``)."""
    source = Path(tempfile.mkdtemp(prefix="faults-src-", dir="/tmp"))
    try:
        shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*SNAPSHOT_SKIP), dirs_exist_ok=True)
        rest = [arg for arg in argv if arg != "--snapshot"]
        child = subprocess.Popen(
            [sys.executable, "-m", "bench.bench_faults", *rest, "--out", str(out)], cwd=source
        )
        try:
            code = child.wait()
        except KeyboardInterrupt:  # the copy stops its stack and removes its folder before it exits
            child.send_signal(signal.SIGINT)
            child.wait(300)
            raise
    finally:
        shutil.rmtree(source, ignore_errors=True)
    if code != 0:
        raise SystemExit(code)
    return json.loads(out.read_text())


QUICK_CASES = {
    "control_pdf",
    "zip_escapes",
    "docx_xxe",
    "html_scripts",
    "pdf_encrypted",
    "zero_byte",
    "files_201",
    "name_control_xss",
}


if __name__ == "__main__":
    main()
