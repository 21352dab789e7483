"""Create the demo engagement, one user per role, and load the demo contracts; with ``--extract``
(``make run`` starts it beside the worker) extract them once and run the demo benchmark set once.

Idempotent: a second run reuses what is there (documents are deduplicated by content).
Passwords come from DEMO_PASSWORD, or are generated once and kept in var/demo_credentials.json.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from config.commands import DataCommand
from dashboards.benchmarks import enqueue, import_set, new_run
from dashboards.models import BenchmarkRun, BenchmarkSet
from demo import write_demo_set
from demo.benchmark_corpus import write_demo_corpus
from engagements.models import Engagement, Membership, Role
from extraction.launch import create_run
from ingest.intake import intake_file
from ingest.models import Document

DEMO_ENGAGEMENT = "Demo: Northwind services review"
DEMO_BENCHMARK = "Demo contracts (synthetic)"
DEMO_USERS = {"admin": Role.ADMIN, "auditor": Role.AUDITOR, "manager": Role.MANAGER}


def demo_credentials(folder: Path) -> dict[str, str]:
    if os.environ.get("DEMO_PASSWORD"):
        return {name: os.environ["DEMO_PASSWORD"] for name in DEMO_USERS}
    path = folder / "demo_credentials.json"
    if path.exists():
        return json.loads(path.read_text())
    creds = {name: secrets.token_urlsafe(9) for name in DEMO_USERS}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(creds, indent=2))
    path.chmod(0o600)
    return creds


class Command(DataCommand):
    help = "Create demo users (one per role) and load the demo contracts."

    def add_arguments(self, parser):
        parser.add_argument("--no-documents", action="store_true", help="Only users and the engagement.")
        parser.add_argument(
            "--extract",
            action="store_true",
            help="Wait for the demo documents to be ingested, then run a first extraction over them "
            "(once: skipped when the demo engagement already has a run), and run the demo "
            "benchmark set once, so the managers' dashboard has figures.",
        )
        parser.add_argument("--wait-seconds", type=int, default=900)

    def handle(self, *args, **options):
        var = Path(settings.BASE_DIR) / "var"
        creds = demo_credentials(var)
        User = get_user_model()
        with transaction.atomic():
            engagement, _ = Engagement.objects.get_or_create(
                name=DEMO_ENGAGEMENT,
                defaults={"client": "Northwind Traders", "policy_facts": {"policy_cap": "$247,830.00"}},
            )
            for username, role in DEMO_USERS.items():
                user, created = User.objects.get_or_create(username=username)
                if created or not user.check_password(creds[username]):
                    user.set_password(creds[username])
                user.is_staff = user.is_superuser = role == Role.ADMIN
                user.save()
                Membership.objects.update_or_create(user=user, engagement=engagement, defaults={"role": role})

        if options["extract"]:
            self._extract_when_ready(engagement, options["wait_seconds"])
            self._benchmark_once(engagement, var / "demo-benchmark")
            return
        if not options["no_documents"]:
            self._load_documents(engagement, var / "demo")

        self.stdout.write(f"\nDemo users (engagement: {DEMO_ENGAGEMENT}):")
        for username, role in DEMO_USERS.items():
            self.stdout.write(f"  {role.label:<8} username: {username:<8} password: {creds[username]}")

    def _extract_when_ready(self, engagement, wait_seconds: int) -> None:
        if engagement.runs.exists():
            return
        deadline = time.monotonic() + wait_seconds
        documents = engagement.documents.all()
        while any(not d.is_terminal for d in documents) and time.monotonic() < deadline:
            time.sleep(3)
            documents = engagement.documents.all()
        ready = [d for d in documents if d.status == Document.Status.READY]
        if ready:
            run = create_run(engagement, documents=ready, user=get_user_model().objects.get(username="admin"))
            self.stdout.write(
                f"  demo extraction run {run.pk} queued ({run.engine}) over {len(ready)} documents"
            )

    def _benchmark_once(self, engagement, folder: Path) -> None:
        """Register the demo benchmark set (see :mod:`demo.benchmark_corpus`) for the demo
        engagement and queue one run of it, unless it has run on the same gold before."""
        write_demo_corpus(folder)
        with transaction.atomic():
            before = (
                BenchmarkSet.objects.filter(name=DEMO_BENCHMARK).values_list("gold_sha256", flat=True).first()
            )
            benchmark_set = import_set(
                folder, DEMO_BENCHMARK, engagement=engagement, weekly_silent_source=False
            )
            if benchmark_set.runs.exists() and before == benchmark_set.gold_sha256:
                return
            # Offline even with an API key: a start-up check should not spend API credit unasked.
            run = new_run(
                benchmark_set,
                engine="offline",
                trigger=BenchmarkRun.Trigger.COMMAND,
                user=get_user_model().objects.get(username="admin"),
            )
            enqueue(run)
        self.stdout.write(
            f"  demo benchmark run {run.pk} queued ({run.engine}) over "
            f"{benchmark_set.document_count} documents, {benchmark_set.pair_count} pairs"
        )

    def _load_documents(self, engagement, folder: Path) -> None:
        admin = get_user_model().objects.get(username="admin")
        for path in write_demo_set(folder):
            result = intake_file(engagement, path, filename=path.name, uploaded_by=admin)
            state = "queued" if result.created else f"already loaded ({result.document.get_status_display()})"
            self.stdout.write(f"  demo document {path.name}: {state}")
