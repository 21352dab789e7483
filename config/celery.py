"""The Celery app. Broker: Redis (``REDIS_URL`` or the embedded one, started as the app first connects).

Settings come from Django settings under the ``CELERY_`` prefix (acks_late,
prefetch 1, time limits, beat schedule); the bounds of a worker child's memory are set here.
Task state is recorded in ``taskstate.TaskState`` by signal handlers, so no result backend is needed.
"""

import os

from celery import Celery
from django.conf import settings

from config import embedded

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


class App(Celery):
    """Celery whose broker connections (a worker's, beat's, a sender's) start the embedded Redis first when
    the settings use it; every connection Celery makes comes from one of these two methods."""

    def connection_for_read(self, url=None, **kwargs):
        embedded.ensure("redis")
        return super().connection_for_read(url, **kwargs)

    def connection_for_write(self, url=None, **kwargs):
        embedded.ensure("redis")
        return super().connection_for_write(url, **kwargs)


app = App("clause_review")
app.config_from_object("django.conf:settings", namespace="CELERY")
# A worker child's memory, bounded (docs/decisions.md, config.celery.worker_max_memory_per_child): a child
# that holds more than WORKER_MAX_MEMORY_PER_CHILD_MB once a task is done (a large conversion's heap, which
# Python keeps) is replaced by a fresh one, and every child after WORKER_MAX_TASKS_PER_CHILD tasks. Celery
# never stops a task for it: what one task may take is bounded by the limits of what a document may cost.
_MAX_MEMORY_MB = int(os.environ.get("WORKER_MAX_MEMORY_PER_CHILD_MB", "1536"))
app.conf.worker_max_memory_per_child = _MAX_MEMORY_MB * 1024  # Celery counts KiB
app.conf.worker_max_tasks_per_child = int(os.environ.get("WORKER_MAX_TASKS_PER_CHILD", "200"))
app.autodiscover_tasks()


def lost_after_s() -> int:
    """Seconds after which work that shows itself running, unchanged, was lost with its process or its
    message: past the hard time limit (the task would have ended, in words) and the broker's redelivery of a
    killed worker's message (the visibility timeout) together, plus ten minutes, so nothing still running or
    about to run again is cut. The beat's sweeps of stalled documents and abandoned clause tasks wait this
    long."""
    return settings.CELERY_TASK_TIME_LIMIT + visibility_timeout_s() + 10 * 60


def visibility_timeout_s() -> int:
    """Seconds after its delivery that the broker hands an unacknowledged task out again (its worker died)."""
    return settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("visibility_timeout", 3600)
