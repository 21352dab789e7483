"""``manage.py bulk_extract --engagement NAME --clause-types T [T ...] [--documents D ...]
[--engine auto|anthropic|offline] [--wait] [--inline]``

Extracts the clause types from the engagement's documents (all ready ones, or those
named by id, title or file name) in one bulk run, and prints the run id.

* anthropic: the requests are built and submitted as Message Batches now (their ids are
  printed); the beat task ``bulk.tasks.poll_batches`` follows them, harvests the results
  and sends retries. ``--wait`` follows them from here instead (poll, harvest, resubmit).
* offline: one Celery task per document goes to the workers. ``--wait`` prints progress
  until the run ends; ``--inline`` runs the documents in this process (no worker needed).

Exit status 1 when the run ends with failed clause tasks.
"""

from __future__ import annotations

import time

from django.core.management.base import CommandError

from bulk import harvest, poll, progress, submit
from bulk.service import BulkError, start_bulk, usable_engine
from config.commands import DataCommand
from engagements.models import Engagement
from extraction import pipeline
from extraction.agent.engine import make_client
from extraction.models import ClauseTask, ExtractionRun


class Command(DataCommand):
    help = "Extract clause types from many documents at once (Message Batches API or offline workers)."

    def add_arguments(self, parser):
        parser.add_argument("--engagement", required=True, help="engagement name")
        parser.add_argument(
            "--clause-types",
            nargs="+",
            required=True,
            metavar="TYPE",
            help='clause type names (quote names with spaces: "Governing Law") or slugs',
        )
        parser.add_argument(
            "--documents",
            nargs="+",
            metavar="DOC",
            help="document ids, titles or file names (default: every ready document)",
        )
        parser.add_argument(
            "--engine", default=None, help="auto | anthropic | offline (default: EXTRACTION_ENGINE)"
        )
        parser.add_argument("--wait", action="store_true", help="follow the run until it ends")
        parser.add_argument(
            "--inline", action="store_true", help="offline: run the documents in this process"
        )
        parser.add_argument(
            "--poll-seconds", type=float, default=30.0, help="with --wait: seconds between polls"
        )

    def handle(self, *args, **opts):
        engagement = Engagement.objects.filter(name=opts["engagement"]).first()
        if engagement is None:
            raise CommandError(f"no engagement named {opts['engagement']!r}")
        try:
            engine = usable_engine(opts["engine"])
            run = start_bulk(
                engagement,
                clause_types=opts["clause_types"],
                documents=opts["documents"],
                engine=engine,
                enqueue=engine == "offline" and not opts["inline"],
            )
        except BulkError as exc:
            raise CommandError(str(exc)) from None
        summary = progress.run_summary(run)
        self.stdout.write(
            f"bulk run {run.pk}: {summary.documents} documents × {len(summary.clause_types)} "
            f"clause types = {summary.counts['total']} clause tasks, engine {run.engine}"
        )
        started = time.monotonic()
        if engine == "anthropic":
            for job in submit.submit_pending(run):
                self.stdout.write(
                    f"  batch {job.sequence}: {job.batch_id or '—'} · {job.request_count} requests · "
                    f"{job.size_bytes:,} bytes · {job.state}{(' · ' + job.error) if job.error else ''}"
                )
            if opts["wait"]:
                self._follow_batches(run, opts["poll_seconds"])
        elif opts["inline"]:
            self._inline(run)
        elif opts["wait"]:
            self._follow(run)
        run.refresh_from_db()
        counts = progress.run_summary(run).counts
        self.stdout.write(
            f"run {run.pk} {run.status}: {counts['done']} done, {counts['failed']} failed, "
            f"{counts['running'] + counts['pending']} open of {counts['total']} "
            f"({time.monotonic() - started:.1f} s) · cost ${run.cost_usd}"
        )
        if run.status == ExtractionRun.Status.FAILED:
            raise SystemExit(1)

    def _inline(self, run) -> None:
        docs = list(
            ClauseTask.objects.filter(run=run)
            .values_list("document_id", flat=True)
            .distinct()
            .order_by("document_id")
        )
        for n, doc_id in enumerate(docs, 1):
            pipeline.process_until_done(run.pk, doc_id)  # a fresh session after each interruption
            self.stdout.write(f"  [{n}/{len(docs)}] document {doc_id} done")

    def _follow(self, run) -> None:
        last = None
        while True:
            run.refresh_from_db()
            counts = progress.run_summary(run).counts
            line = (
                f"  {counts['done'] + counts['failed']}/{counts['total']} finished "
                f"({counts['failed']} failed)"
            )
            if line != last:
                self.stdout.write(line)
                last = line
            if run.status in (ExtractionRun.Status.DONE, ExtractionRun.Status.FAILED):
                return
            time.sleep(1.0)

    def _follow_batches(self, run, seconds: float) -> None:
        client = make_client()
        while True:
            result = poll.poll_active(client)
            for job_id in result.harvest:
                job = run.batch_jobs.filter(pk=job_id).first()
                if job is not None:
                    done = harvest.harvest(job, client=client)
                    self.stdout.write(f"  harvested batch {job.sequence}: {done.outcomes}")
            if run.batch_items.filter(state="pending").exists():
                # a request whose batch the API refused is counted among the retries of its next batch
                for job in submit.submit_pending(run, client=client):
                    self.stdout.write(
                        f"  batch {job.sequence}: {job.batch_id or '—'} · {job.request_count} "
                        f"requests ({job.retries} retries) · {job.state}"
                        f"{(' · ' + job.error) if job.error else ''}"
                    )
            run.refresh_from_db()
            if run.status in (ExtractionRun.Status.DONE, ExtractionRun.Status.FAILED):
                return
            time.sleep(seconds)
