"""Engagement export: memory held while serving it, and its time, as the engagement grows.

A throw-away embedded PostgreSQL gets two engagements of ``--docs`` contracts each (default 50 and 400),
every contract with one answer per clause type of the catalog, two citations per found clause and a
review history of two decisions: the shape of a night's bulk run after a first review pass. Each export
(CSV, JSON, XLSX) is fetched through the real view with Django's test client, its body read to the end
and dropped as it comes, as a browser saving it to disk would.

* ``peak_mib``: the most memory Python held at once while the export was built and read
  (``tracemalloc``: Python objects, the query rows included; not the C heaps of libpq or zlib);
* ``body_mib``: the size of the file the user gets; ``seconds`` and ``first_byte_s``: wall time to the last
  and to the first byte, in a fetch of its own before the measured one (``tracemalloc`` slows Python down).

Baseline: the smallest engagement in the same run. ``peak_growth_vs_smallest`` is a size's peak over the
smallest's peak, next to ``body_growth_vs_smallest``, the same for the file: an export held whole in
memory grows its peak with the file; a streamed one stays flat.

Usage: ``python -m bench.bench_export [--docs 50 400]``  (prints one JSON object)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._django import bench_django, ratio  # noqa: E402

FORMATS = ("csv", "json", "xlsx")


def seed(name: str, docs: int) -> int:
    """An engagement of ``docs`` contracts with a full answer set each; returns its id."""
    from django.contrib.auth import get_user_model

    from engagements.models import Engagement
    from extraction.catalog.sync import ensure_catalog
    from extraction.models import Citation, ClauseType, Extraction, ExtractionRun
    from reviewer.models import Review
    from tests.factories import make_document

    ensure_catalog()
    types = list(ClauseType.objects.order_by("name"))
    reviewer, _ = get_user_model().objects.get_or_create(username="bench-reviewer")
    engagement = Engagement.objects.create(name=name, client="Bench")
    run = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
    for d in range(docs):
        document, _, chunks = make_document(engagement, title=f"Contract {d:04d}", pages=6, seed=d)
        extractions = Extraction.objects.bulk_create(
            [
                Extraction(
                    run=run,
                    document=document,
                    clause_type=ct,
                    engine="offline",
                    status="found" if i % 3 else "not_found",
                    dedupe_key=f"k{i}",
                    clause_text=chunks[i % len(chunks)].text if i % 3 else "",
                )
                for i, ct in enumerate(types)
            ]
        )
        citations, reviews = [], []
        for i, ex in enumerate(extractions):
            if ex.status == "found":
                for ordinal in range(2):
                    chunk = chunks[(i + ordinal) % len(chunks)]
                    end = min(chunk.char_end, chunk.char_start + 300)
                    citations.append(
                        Citation(
                            extraction=ex,
                            chunk=chunk,
                            ordinal=ordinal,
                            page=chunk.page_start,
                            start=chunk.char_start,
                            end=end,
                            quote=document.text[chunk.char_start : end],
                        )
                    )
            reviews += [
                Review(
                    extraction=ex, reviewer=reviewer, decision=decision, reason="bench", extraction_version=1
                )
                for decision in ("reject", "accept")
            ]
        Citation.objects.bulk_create(citations)
        Review.objects.bulk_create(reviews)
    return engagement.pk


def fetch(client, url: str) -> tuple[int, float, float, bool]:
    """Bytes, seconds to the first byte, seconds to the last, and whether it streamed."""
    started = time.perf_counter()
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    size, first = 0, None
    for part in response.streaming_content if response.streaming else [response.content]:
        first = first if first is not None else time.perf_counter() - started
        size += len(part)
    response.close()
    return size, first, time.perf_counter() - started, response.streaming


def measure(client, engagement_id: int, fmt: str) -> dict:
    from django.urls import reverse

    url = reverse("engagement-export", args=[engagement_id, fmt])
    size, first, seconds, streamed = fetch(client, url)  # timed without tracemalloc, which slows Python down
    tracemalloc.start()
    fetch(client, url)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "peak_mib": round(peak / 2**20, 2),
        "body_mib": round(size / 2**20, 2),
        "seconds": round(seconds, 2),
        "first_byte_s": round(first, 2),
        "streamed": streamed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, nargs="+", default=[50, 400])
    args = parser.parse_args()
    with bench_django("export"):
        from django.contrib.auth import get_user_model
        from django.test import Client

        from engagements.models import Membership
        from extraction.models import ClauseType, Extraction

        sizes = sorted(set(args.docs))
        engagements = {docs: seed(f"Bench export {docs}", docs) for docs in sizes}
        user = get_user_model().objects.create_user("bench-exporter", password="bench-password-1")
        Membership.objects.bulk_create(
            [Membership(user=user, engagement_id=pk, role="auditor") for pk in engagements.values()]
        )
        client = Client(HTTP_HOST="127.0.0.1")
        client.force_login(user)
        results = {}
        for docs in sizes:
            answers = Extraction.objects.filter(document__engagement_id=engagements[docs]).count()
            results[str(docs)] = {
                "documents": docs,
                "answers": answers,
                **{fmt: measure(client, engagements[docs], fmt) for fmt in FORMATS},
            }
        smallest = results[str(sizes[0])]
        for row in results.values():
            for fmt in FORMATS:
                row[fmt]["peak_growth_vs_smallest"] = ratio(row[fmt]["peak_mib"], smallest[fmt]["peak_mib"])
                row[fmt]["body_growth_vs_smallest"] = ratio(row[fmt]["body_mib"], smallest[fmt]["body_mib"])
        print(
            json.dumps(
                {
                    "bench": "export",
                    "clause_types": ClauseType.objects.count(),
                    "baseline": f"the {sizes[0]}-document engagement, same run",
                    "sizes": results,
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
