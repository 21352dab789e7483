"""Recompute the cached dashboard figures and alerts now (what Celery beat does daily)."""
from django.core.management.base import BaseCommand

from dashboards.tasks import refresh_dashboards


class Command(BaseCommand):
    help = "Refresh the dashboard snapshots and alerts of every engagement (or one)."

    def add_arguments(self, parser):
        parser.add_argument("--engagement", type=int)

    def handle(self, *args, **options):
        count = refresh_dashboards(options["engagement"])
        self.stdout.write(f"refreshed {count} engagement(s)")
