"""Operational tasks: a health check that proves a worker runs, and the daily purge."""

from datetime import timedelta

from celery import shared_task
from django.utils import timezone

from taskstate.models import TaskState


class HealthCheckFailure(RuntimeError):
    """Raised on purpose by ``healthcheck(fail_with=...)`` to check that failures are recorded."""


@shared_task
def healthcheck(echo: str = "ok", fail_with: str = "") -> str:
    """Return ``echo``; with ``fail_with`` raise instead (checks the failure path end to end)."""
    if fail_with:
        raise HealthCheckFailure(fail_with)
    return echo


@shared_task
def purge_old_states(days: int = 30) -> int:
    """Delete finished task rows older than ``days`` (run daily by Celery beat)."""
    cutoff = timezone.now() - timedelta(days=days)
    deleted, _ = TaskState.objects.filter(finished_at__lt=cutoff).delete()
    return deleted
