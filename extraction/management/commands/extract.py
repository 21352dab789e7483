"""``manage.py extract --engagement NAME [--document ID ...] [--type NAME ...] [--engine E] [--wait]``

Creates an extraction run (one ClauseTask per document x clause type) and queues it for the
workers; with ``--wait`` it runs the documents in this process instead and prints the result.
"""

from __future__ import annotations

from django.core.management.base import CommandError

from config.commands import DataCommand
from engagements.models import Engagement
from extraction import launch, pipeline
from extraction.models import Extraction
from extraction.service import resolve_type
from ingest.models import Document


class Command(DataCommand):
    help = "Extract clauses from an engagement's documents."

    def add_arguments(self, parser):
        parser.add_argument("--engagement", required=True)
        parser.add_argument("--document", type=int, action="append", help="document id (repeatable)")
        parser.add_argument(
            "--type", action="append", dest="types", help="clause type name or slug (repeatable)"
        )
        parser.add_argument("--engine", choices=["auto", "anthropic", "offline"], default=None)
        parser.add_argument("--wait", action="store_true", help="run here and now instead of on the workers")

    def handle(self, *args, **o):
        engagement = Engagement.objects.filter(name=o["engagement"]).first()
        if engagement is None:
            raise CommandError(f"no engagement named {o['engagement']!r}")
        docs = engagement.documents.filter(status=Document.Status.READY)
        if o["document"]:
            docs = docs.filter(pk__in=o["document"])
        docs = list(docs)
        if not docs:
            raise CommandError("no ready document to extract from")
        types = None
        if o["types"]:
            try:
                types = [resolve_type(t, engagement) for t in o["types"]]
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
        run = launch.create_run(
            engagement, documents=docs, clause_types=types, engine=o["engine"], enqueue=not o["wait"]
        )
        self.stdout.write(f"run {run.pk}: {len(docs)} document(s), engine {run.engine}")
        if not o["wait"]:
            self.stdout.write("queued for the workers")
            return
        for doc in docs:
            for _ in range(5):
                if pipeline.process_document(run.pk, doc.pk) == pipeline.DONE:
                    break
        run.refresh_from_db()
        for ex in Extraction.objects.filter(run=run).select_related("clause_type", "document"):
            cites = ", ".join(f"p.{c.page}" for c in ex.citations.all())
            self.stdout.write(f"{ex.document.title} · {ex.clause_type.name}: {ex.status} {cites}")
        self.stdout.write(
            f"run {run.pk} {run.status}: {run.input_tokens} in / {run.output_tokens} out tokens, "
            f"cache read {run.cache_read_tokens}, ${run.cost_usd}"
        )
