"""The Celery app. Broker: Redis (``REDIS_URL`` or the embedded one).

Settings come from Django settings under the ``CELERY_`` prefix (acks_late,
prefetch 1, time limits, beat schedule). Task state is recorded in
``taskstate.TaskState`` by signal handlers, so no result backend is needed.
"""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("clause_review")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def lost_after_s() -> int:
    """Seconds after which work that shows itself running, unchanged, was lost with its process or its message:
    past the hard time limit (the task would have ended, in words) and the broker's redelivery of a killed
    worker's message (the visibility timeout) together, plus ten minutes, so nothing still running or about to
    run again is cut. The beat's sweeps of stalled documents and abandoned clause tasks wait this long."""
    from django.conf import settings

    return settings.CELERY_TASK_TIME_LIMIT + visibility_timeout_s() + 10 * 60


def visibility_timeout_s() -> int:
    """Seconds after its delivery that the broker hands an unacknowledged task out again (its worker died)."""
    from django.conf import settings

    return settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("visibility_timeout", 3600)
