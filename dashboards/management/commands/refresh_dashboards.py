"""Recompute the cached dashboard figures and alerts now (what Celery beat does daily)."""

from config.commands import DataCommand
from dashboards.tasks import refresh_dashboards


class Command(DataCommand):
    help = "Refresh the dashboard snapshots and alerts of every engagement (or one)."

    def add_arguments(self, parser):
        parser.add_argument("--engagement", type=int)

    def handle(self, *args, **options):
        count = refresh_dashboards(options["engagement"])
        self.stdout.write(f"refreshed {count} engagement(s)")
