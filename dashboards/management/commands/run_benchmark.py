"""Run a benchmark set through ``evaluate`` (or import an evaluate output) and store the run."""

import json

from django.core.management.base import CommandError
from django.db import transaction

from config.commands import DataCommand
from dashboards import benchmarks
from dashboards.models import BenchmarkRun, BenchmarkSet


class Command(DataCommand):
    help = "Run a benchmark set and store its metrics and per-pair outcomes."

    def add_arguments(self, parser):
        parser.add_argument("set_name")
        parser.add_argument("--engine", choices=["offline", "anthropic"], default="")
        parser.add_argument("--limit", type=int, help="First N documents of documents.jsonl.")
        parser.add_argument("--k", type=int, help="Retrieved chunks per question (default 5).")
        parser.add_argument(
            "--absent-only", action="store_true", help="Only the absent pairs (silent source)."
        )
        parser.add_argument(
            "--queue", action="store_true", help="Enqueue on a Celery worker instead of running here."
        )
        parser.add_argument(
            "--from-output",
            metavar="DIR",
            help="Do not run evaluate: import DIR/predictions.jsonl and DIR/metrics.json.",
        )

    def handle(self, *args, **options):
        benchmark_set = BenchmarkSet.objects.filter(name=options["set_name"]).first()
        if benchmark_set is None:
            raise CommandError(f"no benchmark set named {options['set_name']!r} (see import_benchmark)")
        scope = BenchmarkRun.Scope.ABSENT if options["absent_only"] else BenchmarkRun.Scope.ALL
        trigger = BenchmarkRun.Trigger.IMPORT if options["from_output"] else BenchmarkRun.Trigger.COMMAND
        with transaction.atomic():
            run = benchmarks.new_run(
                benchmark_set,
                engine=options["engine"],
                scope=scope,
                trigger=trigger,
                limit=options["limit"],
                k=options["k"],
            )
            if options["queue"]:
                benchmarks.enqueue(run)
        if options["queue"]:
            self.stdout.write(f"run #{run.pk} queued")
            return
        try:
            if options["from_output"]:
                benchmarks.import_existing(run, options["from_output"])
            else:
                benchmarks.execute(run)
        except Exception as exc:
            raise CommandError(f"run #{run.pk} failed: {exc}") from None
        run.refresh_from_db()
        self.stdout.write(
            json.dumps(
                {
                    "run": run.pk,
                    "pairs": run.n,
                    "passes": run.passes,
                    "pass_rate": run.pass_rate,
                    "present_pass_rate": run.hit_rate,
                    "silent_source": run.silent_rate,
                }
            )
        )
