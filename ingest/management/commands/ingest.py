"""``manage.py ingest PATH|URL... --engagement NAME [--doc-type T] [--wait] [--dump-chunks OUT.jsonl]``

Takes files (and the documents under folders) into an engagement through
:func:`ingest.intake.intake_file`; a ZIP of contracts as a document for each file in it
(:func:`ingest.archive.intake_archive`); an http(s) URL as a document fetched by a worker, or by this
process with ``--inline`` (:mod:`ingest.url_intake`). Without ``--wait`` the pipelines are queued for the
Celery workers and the command returns. With ``--wait`` it waits for them with a progress line: on
the workers if one answers a ping, otherwise by running the pipeline in this process
(``--inline`` forces that). ``--dump-chunks`` (implies ``--wait``) then writes one JSON line
per chunk. ``--replace`` turns a changed file of the same name into a new version of its
document (only changed chunks are re-embedded); a document that clauses were already extracted
from is kept as it is, and the changed file becomes a new document. The same bytes as a document that
failed on our side (a crash, a lost worker) are processed again, like a new file. Exit status 1 when any
file was refused or any document failed.
"""

from __future__ import annotations

import time

from django.core.management.base import CommandError

from config.commands import DataCommand
from engagements.models import Engagement
from ingest import cli
from ingest.archive import intake_archive, is_archive
from ingest.intake import IntakeError, IntakeResult, intake_file
from ingest.models import Document
from ingest.pipeline import run_pipeline
from ingest.url_intake import fetch_document, intake_url


class Command(DataCommand):
    help = "Ingest documents into an engagement (convert, chunk, embed, index)."

    def add_arguments(self, parser):
        parser.add_argument(
            "paths", nargs="+", help="files, folders of documents, ZIPs of documents, or http(s) URLs"
        )
        parser.add_argument("--engagement", required=True, help="engagement name (created if missing)")
        parser.add_argument("--doc-type", default="", help="document type, e.g. MSA")
        parser.add_argument(
            "--wait", action="store_true", help="wait until every document is ready or failed"
        )
        parser.add_argument(
            "--inline", action="store_true", help="with --wait: run the pipeline in this process"
        )
        parser.add_argument(
            "--replace",
            action="store_true",
            help=(
                "a changed file replaces the document of the same name "
                "(unless clauses were extracted from it)"
            ),
        )
        parser.add_argument(
            "--dump-chunks", metavar="OUT.jsonl", help="write the chunks as JSON lines (implies --wait)"
        )

    def handle(self, *args, **options):
        engagement, made = Engagement.objects.get_or_create(name=options["engagement"])
        if made:
            self.stdout.write(f"created engagement “{engagement.name}”")
        urls = [arg for arg in options["paths"] if cli.looks_like_url(arg)]
        files = cli.find_files([arg for arg in options["paths"] if arg not in urls])
        if not files and not urls:
            raise CommandError("no files to ingest")
        wait = options["wait"] or bool(options["dump_chunks"])
        inline = wait and (options["inline"] or not cli.workers_alive())
        if wait and inline and not options["inline"]:
            self.stdout.write("no Celery worker answered: running the pipeline in this process")

        documents: list[Document] = []
        fresh: list[Document] = []
        refused = 0
        for label, outcome in self._take(engagement, files, urls, options, inline):
            if not isinstance(outcome, IntakeResult):
                refused += 1
                self.stderr.write(f"{label}: refused: {getattr(outcome, 'message', outcome)}")
                continue
            result = outcome
            document = result.document
            documents.append(document)
            if result.created or result.replaced or result.retried:
                fresh.append(document)
                verb = "replaced" if result.replaced else "retried" if result.retried else "queued"
                if document.status == Document.Status.FETCHING:
                    verb = "fetching"
                kept = (
                    f" (document {result.kept.pk}, the earlier version, has clauses or reviews and is kept)"
                    if result.kept
                    else ""
                )
                self.stdout.write(f"{label}: {verb} as document {document.pk}{kept}")
            else:
                self.stdout.write(
                    f"{label}: same {'URL' if document.source_url == label else 'bytes'} as document "
                    f"{document.pk} ({document.status}); nothing to do"
                )

        if wait:
            documents = self._wait(documents, fresh, inline)
        if options["dump_chunks"]:
            with open(options["dump_chunks"], "w", encoding="utf-8") as out:
                count = cli.dump_chunks([d for d in documents if d.status == Document.Status.READY], out)
            self.stdout.write(f"wrote {count} chunks to {options['dump_chunks']}")
        failed = sum(1 for d in documents if d.status in (Document.Status.FAILED, Document.Status.NEEDS_OCR))
        if refused or (wait and failed):
            raise SystemExit(1)

    def _take(self, engagement, files, urls, options, inline: bool):
        """(what is named, its ``IntakeResult`` or why it was refused) for each file, each file of each
        archive, and each URL."""
        asked = {"doc_type": options["doc_type"], "enqueue": not inline}
        taken: list[tuple[str, IntakeResult | Exception]] = []
        for path in files:
            try:
                if is_archive(path):
                    entries = intake_archive(engagement, path, filename=path.name, **asked)
                    for entry in entries:
                        outcome = entry.result if entry.result is not None else entry.error
                        assert outcome is not None  # an entry is taken or refused
                        taken.append((f"{path.name} › {entry.path}", outcome))
                    continue
                result = intake_file(
                    engagement, path, filename=path.name, replace=options["replace"], **asked
                )
                taken.append((path.name, result))
            except (IntakeError, OSError) as exc:
                taken.append((path.name, exc))
        for url in urls:
            try:
                taken.append((url, intake_url(engagement, url, **asked)))
            except IntakeError as exc:
                taken.append((url, exc))
        return taken

    def _wait(self, documents: list[Document], fresh: list[Document], inline: bool) -> list[Document]:
        line = cli.ProgressLine(self.stdout)
        if inline:
            for document in fresh:
                started = time.monotonic()
                if document.status == Document.Status.FETCHING:
                    line.show(f"{document.original_name}: fetching")
                    fetch_document(document.pk, enqueue=False)
                    document.refresh_from_db()
                    if document.status != Document.Status.QUEUED:
                        line.done(f"{document.original_name}: {cli.describe(document)}")
                        continue

                def on_stage(stage: str, pct: int, d: Document = document) -> None:
                    line.show(f"{d.original_name}: {stage} {pct}%")

                run_pipeline(document.pk, on_stage=on_stage)
                document.refresh_from_db()
                line.done(
                    f"{document.original_name}: {cli.describe(document)} ({time.monotonic() - started:.1f} s)"
                )
        else:
            started = time.monotonic()

            def show(rows):
                busy = [r for r in rows if not r.is_terminal]
                done = len(rows) - len(busy)
                current = f" · {busy[0].original_name} {busy[0].status} {busy[0].progress}%" if busy else ""
                line.show(f"{done}/{len(rows)} done{current}")

            rows = cli.wait_for([d.pk for d in documents], on_change=show)
            line.done(f"{len(rows)} documents finished in {time.monotonic() - started:.1f} s")
            for row in rows:
                self.stdout.write(f"{row.original_name}: {cli.describe(row)}")
        ids = [d.pk for d in documents]
        by_pk = Document.objects.in_bulk(ids)
        return [by_pk[pk] for pk in ids if pk in by_pk]
