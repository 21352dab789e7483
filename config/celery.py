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
