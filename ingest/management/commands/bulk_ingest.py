"""``manage.py bulk_ingest DIR --engagement NAME [--doc-type T] [--wait] [--inline]``

For folders of hundreds of files: every document file under DIR goes through
:func:`ingest.intake.intake_file`, one line per file as it goes (queued, duplicate or
refused, with the reason; the same bytes as a document that failed on our side are
processed again, as retried). A file that is refused, or that breaks in any way, never stops
the rest. With ``--wait`` the command follows the pipelines (on the workers, or in this
process when none answers or with ``--inline``) and prints each document as it finishes. A
summary closes the run; exit status 1 when anything was refused or failed.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from django.core.management.base import CommandError

from config.commands import DataCommand
from engagements.models import Engagement
from ingest import cli
from ingest.intake import IntakeError, intake_file
from ingest.models import Document
from ingest.pipeline import run_pipeline


class Command(DataCommand):
    help = "Ingest every document under a folder into an engagement."

    def add_arguments(self, parser):
        parser.add_argument("folder")
        parser.add_argument("--engagement", required=True, help="engagement name (created if missing)")
        parser.add_argument("--doc-type", default="")
        parser.add_argument(
            "--all-files", action="store_true", help="also try files without a document extension"
        )
        parser.add_argument(
            "--wait", action="store_true", help="follow the pipelines until every document finishes"
        )
        parser.add_argument(
            "--inline", action="store_true", help="with --wait: run the pipelines in this process"
        )

    def handle(self, *args, **options):
        folder = Path(options["folder"])
        if not folder.is_dir():
            raise CommandError(f"{folder} is not a folder")
        engagement, _ = Engagement.objects.get_or_create(name=options["engagement"])
        files = cli.find_files([folder], all_files=options["all_files"])
        wait = options["wait"]
        inline = wait and (options["inline"] or not cli.workers_alive())
        started = time.monotonic()
        counts: Counter[str] = Counter()
        refused: list[tuple[str, str]] = []
        queued: list[Document] = []
        width = len(str(len(files)))
        for n, path in enumerate(files, start=1):
            label = f"[{n:>{width}}/{len(files)}] {path.relative_to(folder)}"
            try:
                result = intake_file(
                    engagement, path, filename=path.name, doc_type=options["doc_type"], enqueue=not inline
                )
            except IntakeError as exc:
                counts["refused"] += 1
                refused.append((str(path.relative_to(folder)), exc.message))
                self.stdout.write(f"{label}: refused ({exc.code}): {exc.message}")
                continue
            except Exception as exc:  # an unreadable file, a storage hiccup: note it, go on
                counts["refused"] += 1
                refused.append((str(path.relative_to(folder)), f"{type(exc).__name__}: {exc}"))
                self.stdout.write(f"{label}: error: {type(exc).__name__}: {exc}")
                continue
            if result.created or result.retried:
                counts["queued" if result.created else "retried"] += 1
                queued.append(result.document)
                verb = "queued" if result.created else "failed on our side before; retried"
                self.stdout.write(f"{label}: {verb} as document {result.document.pk}")
            else:
                counts["duplicate"] += 1
                self.stdout.write(f"{label}: duplicate of document {result.document.pk}")
            if inline and (result.created or result.retried):
                self._run_inline(label, result.document)

        outcome: Counter[str] = Counter()
        if wait:
            if inline:
                rows = list(Document.objects.filter(pk__in=[d.pk for d in queued]))
            else:
                rows = self._follow(queued)
            outcome.update(row.status for row in rows)
        self._summary(len(files), counts, outcome, refused, time.monotonic() - started, wait)
        if counts["refused"] or outcome[Document.Status.FAILED] or outcome[Document.Status.NEEDS_OCR]:
            raise SystemExit(1)

    def _run_inline(self, label: str, document: Document) -> None:
        line = cli.ProgressLine(self.stdout)
        started = time.monotonic()
        try:
            run_pipeline(document.pk, on_stage=lambda stage, pct: line.show(f"{label}: {stage} {pct}%"))
        except Exception:  # recorded on the document by the pipeline; go on with the next file
            pass
        document.refresh_from_db()
        line.done(f"{label}: {cli.describe(document)} ({time.monotonic() - started:.1f} s)")

    def _follow(self, queued: list[Document]) -> list[Document]:
        line = cli.ProgressLine(self.stdout)
        reported: set[int] = set()

        def show(rows):
            for row in rows:
                if row.is_terminal and row.pk not in reported:
                    reported.add(row.pk)
                    line.done(f"{row.original_name}: {cli.describe(row)}")
            busy = [r for r in rows if not r.is_terminal]
            if busy:
                line.show(
                    f"{len(rows) - len(busy)}/{len(rows)} finished · {busy[0].original_name} "
                    f"{busy[0].status} {busy[0].progress}%"
                )

        return cli.wait_for([d.pk for d in queued], on_change=show)

    def _summary(self, total, counts, outcome, refused, seconds, waited) -> None:
        self.stdout.write("")
        retried = f", {counts['retried']} retried" if counts["retried"] else ""
        self.stdout.write(
            f"{total} files in {seconds:.1f} s: {counts['queued']} new, {counts['duplicate']} duplicates, "
            f"{counts['refused']} refused{retried}"
        )
        if waited:
            parts = ", ".join(f"{n} {status}" for status, n in sorted(outcome.items()))
            self.stdout.write(f"documents: {parts or 'none'}")
        for name, reason in refused:
            self.stdout.write(f"  refused {name}: {reason}")
