"""Celery tasks of the ingest pipeline: one thin task per stage, chained per document.

Each task runs :func:`ingest.pipeline.run_stage` for its stage; the stage rows say what
happened (no result backend). A stage that finds the document failed or gone does nothing,
so the rest of a chain after a failure is a string of no-ops. Tasks are ``acks_late``
(settings): a worker killed mid-stage gets the message redelivered, and the stage re-runs
idempotently.
"""

from __future__ import annotations

import logging

from celery import Task, chain, shared_task, signature
from celery.exceptions import TimeLimitExceeded
from django.conf import settings

from config import uploads
from ingest import intake, pipeline, url_intake

log = logging.getLogger(__name__)


class StageTask(Task):
    """At the hard time limit the pool kills the process running a stage, so the stage cannot say why;
    the worker then calls ``on_failure`` (in its main process) and acknowledges the message."""

    def on_failure(self, exc, task_id, args, kwargs, einfo):
        if isinstance(exc, TimeLimitExceeded) and args:
            pipeline.fail_at_time_limit(args[0], self.name.removeprefix("ingest."))


@shared_task(name="ingest.convert", base=StageTask)
def convert_document(document_id: int) -> bool:
    return pipeline.run_stage(document_id, "convert")


@shared_task(name="ingest.chunk", base=StageTask, bind=True)
def chunk_document(self, document_id: int) -> bool:
    chunked = pipeline.run_stage(document_id, "chunk")
    if chunked and pipeline.is_large(document_id):
        to_large_queue(self.request, document_id)
    return chunked


def to_large_queue(request, document_id: int) -> None:
    """Send the rest of a very large document's pipeline (embed, index) to ``settings.INGEST_LARGE_QUEUE``,
    served by a worker of its own: two such documents would otherwise hold every worker for as long as they
    take to embed, and every other upload wait. Celery sends the next task of a chain, once this one returns,
    from ``request.chain`` (the signatures left, as dicts): their queue is set there. What follows the
    pipeline (an upload's extraction) stays on its own queue."""
    for step in request.chain or []:
        if str(step.get("task", "")).startswith("ingest."):
            step.setdefault("options", {})["queue"] = settings.INGEST_LARGE_QUEUE
    log.info("document %s is large: embedded on the %s queue", document_id, settings.INGEST_LARGE_QUEUE)


@shared_task(name="ingest.embed", base=StageTask)
def embed_document(document_id: int) -> bool:
    return pipeline.run_stage(document_id, "embed")


@shared_task(name="ingest.index", base=StageTask)
def index_document(document_id: int) -> bool:
    return pipeline.run_stage(document_id, "index")


@shared_task(
    name="ingest.fetch",
    soft_time_limit=int(settings.URL_FETCH_TIMEOUT) + 120,  # the fetch's own deadline, then storing it
    time_limit=int(settings.URL_FETCH_TIMEOUT) + 150,
)
def fetch_url(document_id: int, then: dict | None = None) -> bool:
    """Fetch a document's URL (``url_intake.fetch_document``); its pipeline, then ``then`` (a signature
    as a dict), is queued when the bytes are in."""
    follow = (lambda _document_id: signature(then)) if then else None
    return url_intake.fetch_document(document_id, then=follow)


def enqueue_fetch(document_id: int, then: dict | None = None):
    """Queue the fetch of a document's URL (call it from ``on_commit``)."""
    return fetch_url.apply_async(args=(document_id,), kwargs={"then": then})


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


@shared_task(name="ingest.tasks.requeue_unsent_documents")
def requeue_unsent_documents() -> str:
    """The beat's sweep for queued documents whose pipeline never reached the workers
    (``intake.requeue_unsent``)."""
    return f"{intake.requeue_unsent()} re-queued"


@shared_task(name="ingest.tasks.sweep_upload_temp_files")
def sweep_upload_temp_files() -> str:
    """The beat's sweep of partial uploads left by web processes that died (``config.uploads``)."""
    return f"{uploads.sweep_stale_temp_files()} removed"
