"""Signal receivers of the ingest app, connected in ``IngestConfig.ready``."""

from __future__ import annotations

from django.dispatch import receiver

from ingest import tasks
from ingest.intake import pipeline_requested
from ingest.url_intake import fetch_requested


@receiver(pipeline_requested, dispatch_uid="ingest.queue_pipeline")
def queue_pipeline(sender, *, document_id: int, then=None, **kwargs) -> None:
    """Queue a saved document's pipeline (convert, chunk, embed, index, then ``then``)."""
    tasks.enqueue_pipeline(document_id, then=then)


@receiver(fetch_requested, dispatch_uid="ingest.queue_fetch")
def queue_fetch(sender, *, document_id: int, then=None, **kwargs) -> None:
    """Queue the fetch of a document's URL (then its pipeline, then ``then``)."""
    tasks.enqueue_fetch(document_id, then=then)
