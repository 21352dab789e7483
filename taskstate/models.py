"""One row per Celery task, kept up to date from Celery signals.

Progress and failures are visible in the database (and so in the UI) without a
Celery result backend.
"""

from django.db import models


class TaskState(models.Model):
    class State(models.TextChoices):
        PENDING = "pending"
        STARTED = "started"
        RETRY = "retry"
        SUCCESS = "success"
        FAILURE = "failure"

    task_id = models.CharField(max_length=64, unique=True)
    name = models.CharField(max_length=200, db_index=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING, db_index=True)
    args = models.TextField(blank=True)
    error = models.TextField(blank=True)
    traceback = models.TextField(blank=True)
    worker = models.CharField(max_length=200, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self):
        return f"{self.name} {self.task_id} {self.state}"
