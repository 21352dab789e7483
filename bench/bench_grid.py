"""The engagement grid and the comparison of one clause type, on an engagement of ``--docs`` contracts ×
every clause type of the catalog.

A throw-away embedded PostgreSQL gets one engagement of ``--docs`` contracts (default 1,000), each with an
answer for every active catalog type (found, not found or unverified), a later run's repeat of a tenth of
them, one citation per found answer and a decision on about a third: the shape of a bulk run after a first
review pass. Rows are written with ``bulk_create``. Each page is fetched through the real view with Django's
test client, signed in as an auditor of the engagement.

* ``view_ms``: the view's own wall time (its ``Server-Timing`` header: queries, rows, template);
  ``request_ms``: the whole request through the test client (middleware, session, user included);
* ``queries``: SQL statements of one request (session and user lookups included).

Scenarios: the grid's first page as it opens (50 contracts × every type, by title), filtered to one type's
found answers, sorted by the number of types found; the comparison of Governing Law across every contract
(its wordings grouped, each diffed against the most common). Target: grid first page p95 ≤ 300 ms (view).

Usage: ``python -m bench.bench_grid [--docs 1000] [--repeat 30]``  (prints one JSON object)
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._django import bench_django, percentiles  # noqa: E402

TARGET_P95_MS = 300.0
GOVERNING = [  # (weight, wording): most contracts share one wording; a few differ
    (
        70,
        "This Agreement is governed by the laws of the State of Delaware, without regard to conflict of laws.",
    ),
    (
        12,
        "This Agreement is governed by the laws of the State of New York, without regard to conflict of laws.",
    ),
    (8, "this agreement is governed by the laws of the state of delaware without regard to conflict of laws"),
    (6, "This Agreement and any dispute arising from it are governed by English law."),
]


def seed(docs: int) -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection

    from engagements.models import Engagement, Membership
    from extraction.catalog.sync import ensure_catalog
    from extraction.models import Citation, ClauseType, Extraction, ExtractionRun, questions
    from ingest.models import Chunk, Document
    from reviewer.models import Review

    ensure_catalog()
    types = list(ClauseType.objects.filter(active=True).exclude(questions()).order_by("name"))
    rng = random.Random(29)
    user = get_user_model().objects.create_user("bench-auditor", password="bench-password-1")
    engagement = Engagement.objects.create(name="Bench grid audit", client="Bench")
    Membership.objects.create(user=user, engagement=engagement, role="auditor")
    run = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
    later = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
    kinds = ["MSA", "Lease", "NDA", "Supply", ""]
    documents = Document.objects.bulk_create(
        [
            Document(
                engagement=engagement,
                file="",
                original_name=f"contract-{d:04d}.pdf",
                sha256=f"{d:064x}",
                title=f"{rng.choice(['Master', 'supply', 'Lease', 'nda'])} agreement {d:04d}",
                doc_type=rng.choice(kinds),
                kind="pdf",
                status="ready",
                progress=100,
                text="",
                page_count=40,
            )
            for d in range(docs)
        ]
    )
    chunks = Chunk.objects.bulk_create(
        [
            Chunk(
                document=doc,
                chunk_id=f"c{doc.pk}",
                ordinal=0,
                text="Bench chunk.",
                char_start=0,
                char_end=12,
                page_start=1,
                page_end=1,
            )
            for doc in documents
        ]
    )
    chunk_of = {c.document_id: c for c in chunks}
    wordings = [w for weight, w in GOVERNING for _ in range(weight)]
    rows = []
    for doc in documents:
        for ct in types:
            roll = rng.random()
            status = "found" if roll < 0.6 else "not_found" if roll < 0.9 else "unverified"
            if ct.name == "Governing Law":
                status = "found" if roll < 0.95 else "not_found"
                text = rng.choice(wordings) if rng.random() < 0.96 else f"Governed by the law of {doc.title}."
            else:
                text = (
                    f"The {ct.name} terms of {doc.title}: ${rng.randint(1, 999)},{rng.randint(0, 999):03d}.00"
                )
            text = text if status != "not_found" else ""
            rows.append((run, doc, ct, status, text))
            if rng.random() < 0.1:
                rows.append((later, doc, ct, status, text))
    extractions = Extraction.objects.bulk_create(
        [
            Extraction(
                run=r,
                document=doc,
                clause_type=ct,
                status=status,
                engine="offline",
                clause_text=text,
                dedupe_key=status,
            )
            for r, doc, ct, status, text in rows
        ],
        batch_size=5000,
    )
    Citation.objects.bulk_create(
        [
            Citation(
                extraction=ex,
                chunk=chunk_of[ex.document_id],
                page=rng.randint(1, 40),
                start=0,
                end=12,
                quote="Bench chunk.",
            )
            for ex in extractions
            if ex.status == "found"
        ],
        batch_size=5000,
    )
    Review.objects.bulk_create(
        [
            Review(
                extraction=ex,
                reviewer=user,
                decision=rng.choice(["accept", "accept", "reject", "correct"]),
                corrected_text="",
                reason="bench",
                extraction_version=1,
            )
            for ex in extractions
            if rng.random() < 0.33
        ],
        batch_size=5000,
    )
    with connection.cursor() as cursor:  # the planner's statistics, as autovacuum would have them by now
        cursor.execute("ANALYZE")
    governing = next(t for t in types if t.name == "Governing Law")
    return {
        "engagement": engagement.pk,
        "user": user.pk,
        "governing_law": governing.pk,
        "types": len(types),
        "extractions": len(extractions),
    }


def measure(client, url: str, repeat: int) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    views, requests = [], []
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)  # a first fetch (warm caches), its queries counted
    assert response.status_code == 200, (url, response.status_code)
    queries = len(ctx.captured_queries)
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(url)
        requests.append((time.perf_counter() - started) * 1000)
        match = re.search(r"view;dur=([\d.]+)", response["Server-Timing"])
        views.append(float(match.group(1)) if match else requests[-1])
    view = percentiles(views)
    return {
        "url": url,
        "view_ms": view,
        "request_ms": percentiles(requests),
        "queries": queries,
        "bytes": len(response.content),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    with bench_django("grid"):
        from django.contrib.auth import get_user_model
        from django.test import Client
        from django.urls import reverse

        started = time.perf_counter()
        data = seed(args.docs)
        seeded_s = time.perf_counter() - started
        client = Client(HTTP_HOST="127.0.0.1")
        client.force_login(get_user_model().objects.get(pk=data["user"]))
        grid = reverse("engagement-grid", args=[data["engagement"]])
        compare = reverse("engagement-compare-type", args=[data["engagement"], data["governing_law"]])
        results = {
            "grid_first_page": measure(client, grid, args.repeat),
            "grid_one_type_found": measure(
                client, f"{grid}?type={data['governing_law']}&status=found", args.repeat
            ),
            "grid_sorted_by_found": measure(client, f"{grid}?sort=-found", args.repeat),
            "grid_last_page": measure(client, f"{grid}?page={(args.docs + 49) // 50}", args.repeat),
            "comparison_governing_law": measure(client, compare, max(5, args.repeat // 2)),
        }
        p95 = results["grid_first_page"]["view_ms"]["p95_ms"]
        print(
            json.dumps(
                {
                    "contracts": args.docs,
                    "clause_types": data["types"],
                    "extractions": data["extractions"],
                    "seed_seconds": round(seeded_s, 1),
                    **results,
                    "target_grid_p95_ms": TARGET_P95_MS,
                    "grid_meets_target": p95 <= TARGET_P95_MS,
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
