"""Clause click to its quote boxed on the page image, in Chromium: p50/p95 as the auditor waits.

A real server (gunicorn, as ``bench_review_fragment``) on a throw-away embedded PostgreSQL + Redis serves
the project's PDF contract (``tests.pdf_contract``: real PDF pages, its clauses cited on several pages).
Debian's Chromium (Playwright) signs in as an auditor, opens the document and clicks each clause of the
list in turn, ``--rounds`` times. One sample: from the click to the clause's cited page shown with its
image loaded (decoded, ``naturalWidth > 0``) and the citation's boxes drawn over it.

* ``cold_ms``: the page image drawn for the first time (the disk cache of page images emptied before
  each round); ``warm_ms``: the same clicks again, the image from the cache (and the browser's, by ETag).

Target: none is set by the issue beyond reporting it; the server's share is ``bench_page_images``'s.

Usage: ``python -m bench.bench_page_click [--rounds 10]``  (prints one JSON object)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # Playwright's sync API runs an event loop here

PASSWORD = "pw-for-bench-page-click-1"
SHOWN = (
    '([number, id]) => { const f = document.querySelector(`figure[data-page-image="${number}"]`);'
    " const i = f && f.querySelector('img');"
    ' return i && i.complete && i.naturalWidth > 0 && f.querySelector(`rect[data-citation-id="${id}"]`); }'
)


def seed() -> tuple[str, list[tuple[int, int, int]]]:
    """An auditor and the PDF contract; (username, [(extraction, its first citation, that page)])."""
    from django.contrib.auth.models import User

    from engagements.models import Engagement, Membership
    from tests.pdf_contract import make_pdf_contract

    engagement = Engagement.objects.create(name="bench page click", client="Bench")
    user = User.objects.create_user(username="auditor-bench", password=PASSWORD)
    Membership.objects.create(user=user, engagement=engagement, role="auditor")
    contract = make_pdf_contract(engagement)
    clicks = [
        (contract.extractions[name].pk, citations[0].pk, citations[0].page)
        for name, citations in contract.citations.items()
    ]
    return user.username, clicks


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    args = parser.parse_args(argv)
    from bench._django import bench_django, percentiles
    from bench.bench_review_fragment import free_port, start_gunicorn

    with bench_django("page-click") as folder:
        from django.urls import reverse
        from playwright.sync_api import sync_playwright

        from ingest.page_view import image_cache
        from tests.e2e.conftest import ARGS, CHROMIUM

        username, clicks = seed()
        document = reverse("document", args=[_document_of(clicks[0][0])])
        port = free_port()
        server = start_gunicorn(port, args.workers, Path(folder) / "gunicorn-access.log")
        cold: list[float] = []
        warm: list[float] = []
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
                for _ in range(args.rounds):
                    # a new context (no browser cache) and an empty server cache: the first pass draws
                    shutil.rmtree(image_cache().root, ignore_errors=True)
                    context = browser.new_context(
                        base_url=f"http://127.0.0.1:{port}", viewport={"width": 1440, "height": 900}
                    )
                    page = signed_in(context, username)
                    for samples in (cold, warm):
                        page.goto(document)
                        for extraction, citation, number in clicks:
                            started = time.perf_counter()
                            page.click(f'#clause-list [data-extraction-id="{extraction}"]')
                            page.wait_for_function(SHOWN, arg=[number, citation])
                            samples.append(1000 * (time.perf_counter() - started))
                    context.close()
                browser.close()
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(20)
        result = {
            "bench": "page_click",
            "cores": os.cpu_count(),
            "load_average_1m": round(os.getloadavg()[0], 2),
            "clauses": len(clicks),
            "pages_cited": len({n for *_, n in clicks}),
            "rounds": args.rounds,
            "cold_ms": percentiles(cold),
            "warm_ms": percentiles(warm),
        }
    print(json.dumps(result, indent=2))
    return result


def signed_in(context, username: str):
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto("/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    return page


def _document_of(extraction_id: int) -> int:
    from extraction.models import Extraction

    return Extraction.objects.values_list("document_id", flat=True).get(pk=extraction_id)


if __name__ == "__main__":
    main(sys.argv[1:])
