"""The base of the project's management commands: each reads and writes the app's tables."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor


class DataCommand(BaseCommand):
    """A command refused in words on a database whose migrations are not all applied (a fresh
    ``EMBEDDED_DIR``, a new ``DATABASE_URL``), instead of a traceback about a missing table
    after its first query. Django's own check only prints a notice and goes on."""

    requires_migrations_checks = True

    def check_migrations(self) -> None:
        executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
        if plan:
            raise CommandError(
                f"The database has {len(plan)} migration(s) not applied yet; run "
                "`python manage.py migrate` with the same settings first (`make run` does)."
            )
