"""Register a labelled corpus in the cuad-dev format as a benchmark set."""

from django.core.management.base import CommandError

from config.commands import DataCommand
from dashboards.benchmarks import ImportRefused, import_set
from dashboards.corpus import CorpusError
from engagements.models import Engagement


class Command(DataCommand):
    help = "Import a corpus folder (documents.jsonl, gold.jsonl, pdf/) as a BenchmarkSet."

    def add_arguments(self, parser):
        parser.add_argument("corpus_dir")
        parser.add_argument("--name", default="", help="Set name (default: the folder name).")
        parser.add_argument(
            "--engagement",
            type=int,
            help="Engagement id the set belongs to (default: shared). Refreshing a set needs its own.",
        )
        parser.add_argument(
            "--no-weekly", action="store_true", help="No weekly silent-source run on this set."
        )

    def handle(self, *args, **options):
        engagement = None
        if options["engagement"]:
            engagement = Engagement.objects.filter(pk=options["engagement"]).first()
            if engagement is None:
                raise CommandError(f"no engagement {options['engagement']}")
        try:
            benchmark_set = import_set(
                options["corpus_dir"],
                options["name"],
                engagement=engagement,
                weekly_silent_source=not options["no_weekly"],
            )
        except CorpusError as exc:
            raise CommandError(str(exc)) from None
        except ImportRefused as exc:  # e.g. a private set's name without --engagement: never turned shared
            raise CommandError(
                f"{exc} (a set keeps the engagement it was imported for; give the same "
                f"--engagement to refresh it)"
            ) from None
        self.stdout.write(
            f"{benchmark_set.name}: {benchmark_set.document_count} documents, "
            f"{benchmark_set.pair_count} pairs ({benchmark_set.absent_count} absent)"
            + (f" · {benchmark_set.credit}" if benchmark_set.credit else "")
        )
