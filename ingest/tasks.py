"""Celery tasks of the ingest pipeline: one thin task per stage, chained per document.

Each task runs :func:`ingest.pipeline.run_stage` for its stage; the stage rows say what
happened (no result backend). A stage that finds the document failed or gone does nothing,
so the rest of a chain after a failure is a string of no-ops. Tasks are ``acks_late``
(settings): a worker killed mid-stage gets the message redelivered, and the stage re-runs
idempotently.
"""
from __future__ import annotations

from celery import chain, shared_task

from ingest import pipeline


@shared_task(name="ingest.convert")
def convert_document(document_id: int) -> bool:
    return pipeline.run_stage(document_id, "convert")


@shared_task(name="ingest.chunk")
def chunk_document(document_id: int) -> bool:
    return pipeline.run_stage(document_id, "chunk")


@shared_task(name="ingest.embed")
def embed_document(document_id: int) -> bool:
    return pipeline.run_stage(document_id, "embed")


@shared_task(name="ingest.index")
def index_document(document_id: int) -> bool:
    return pipeline.run_stage(document_id, "index")


def enqueue_pipeline(document_id: int, then=None):
    """Queue convert → chunk → embed → index for a document (call it from ``on_commit``), and
    ``then(document_id)``, a signature (an upload's "extract when ready"), after the last stage."""
    stages = [convert_document.si(document_id), chunk_document.si(document_id), embed_document.si(document_id),
              index_document.si(document_id)]
    return chain(*stages, *([then(document_id)] if then is not None else [])).apply_async()
