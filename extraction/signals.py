"""Signal receivers of the extraction app, connected in ``ExtractionConfig.ready``."""

from __future__ import annotations

from django.dispatch import receiver

from extraction import tasks
from extraction.launch import run_created


@receiver(run_created, dispatch_uid="extraction.queue_run")
def queue_run(sender, *, run_id: int, queue: str | None = None, **kwargs) -> None:
    """A run created with ``enqueue=True`` is queued for the workers once its rows are committed."""
    tasks.enqueue_or_say_so(run_id, queue)
