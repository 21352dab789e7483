"""Celery tasks of the ingest pipeline: one thin task per stage, chained per document.

Each task runs :func:`ingest.pipeline.run_stage` for its stage; the stage rows say what
happened (no result backend). A stage that finds the document failed or gone does nothing,
so the rest of a chain after a failure is a string of no-ops. Tasks are ``acks_late``
(settings): a worker killed mid-stage gets the message redelivered, and the stage re-runs
idempotently.
"""

from __future__ import annotations

from celery import Task, chain, shared_task
from celery.exceptions import TimeLimitExceeded

from ingest import pipeline


class StageTask(Task):
    """At the hard time limit the pool kills the process running a stage, so the stage cannot say why;
    the worker then calls ``on_failure`` (in its main process) and acknowledges the message."""

    def on_failure(self, exc, task_id, args, kwargs, einfo):
        if isinstance(exc, TimeLimitExceeded) and args:
            pipeline.fail_at_time_limit(args[0], self.name.removeprefix("ingest."))


@shared_task(name="ingest.convert", base=StageTask)
def convert_document(document_id: int) -> bool:
    return pipeline.run_stage(document_id, "convert")


@shared_task(name="ingest.chunk", base=StageTask)
def chunk_document(document_id: int) -> bool:
    return pipeline.run_stage(document_id, "chunk")


@shared_task(name="ingest.embed", base=StageTask)
def embed_document(document_id: int) -> bool:
    return pipeline.run_stage(document_id, "embed")


@shared_task(name="ingest.index", base=StageTask)
def index_document(document_id: int) -> bool:
    return pipeline.run_stage(document_id, "index")


# The Redis broker serves lower numbers first (kombu keeps a list per priority: 0, 3, 6, 9). Every task
# goes out at CELERY_TASK_DEFAULT_PRIORITY (6), in arrival order; a document's later stages, and what
# follows them, go at 3, ahead of documents not started yet, so a batch upload finishes its documents one
# after another. Queued in arrival order, the worker would convert every file, then chunk every one, then
# embed every one: the first would be ready only once the last was embedded, its row saying "embedding
# 95%" all that while. (With no default, every other task would go at 0, ahead of every upload.)
FOLLOW_ON_PRIORITY = 3


def enqueue_pipeline(document_id: int, then=None):
    """Queue convert → chunk → embed → index for a document (call it from ``on_commit``), and
    ``then(document_id)``, a signature (an upload's "extract when ready"), after the last stage."""
    follow_on = [
        chunk_document.si(document_id),
        embed_document.si(document_id),
        index_document.si(document_id),
        *([then(document_id)] if then is not None else []),
    ]
    return chain(
        convert_document.si(document_id), *(sig.set(priority=FOLLOW_ON_PRIORITY) for sig in follow_on)
    ).apply_async()


@shared_task(name="ingest.tasks.fail_stalled_documents")
def fail_stalled_documents() -> str:
    """The beat's sweep for documents that show a running stage nothing will finish
    (``pipeline.fail_stalled``)."""
    return f"{pipeline.fail_stalled()} stalled"
