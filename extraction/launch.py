"""Launching extraction runs: one row per unit of work first, then the work queued on commit.

``create_run`` writes the run and one ``ClauseTask`` per (document, clause type) in one transaction
and, when the transaction commits, sends ``run_created``; the receiver in ``extraction.signals``
queues one Celery task per document (``extraction.tasks.queue_run``). ``extract_ready_document`` is
the one place that decides whether an upload's document is extracted when it becomes ready;
``extract_after_ingest`` and ``extract_on_upload`` are what an upload with "extract" ticked asks of
extraction: the task chained after a new document's pipeline, and the decision for a document the
engagement holds already.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from celery import current_app
from celery.canvas import Signature
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max
from django.dispatch import Signal

from engagements.models import Engagement
from extraction import catalog
from extraction.catalog import scope
from extraction.catalog.sync import as_plain, catalog_order, ensure_catalog
from extraction.engines import resolve_engine_name
from extraction.models import ClauseTask, ClauseType, ExtractionRun
from extraction.offline.engine import OfflineEngine
from ingest.models import Document

# Sent on commit of a run created with ``enqueue=True``; arguments ``run_id`` and ``queue``.
run_created = Signal()
# The task an upload's pipeline ends with (``extraction.tasks.extract_when_ready`` declares this name): the
# chain names it, so it is built here without importing the tasks module, which imports this one.
EXTRACT_WHEN_READY = "extraction.tasks.extract_when_ready"


def engine_model(engine: str) -> str:
    if engine == "anthropic":
        return settings.ANTHROPIC_MODEL
    return OfflineEngine(use_embeddings=False).model


def active_types(engagement: Engagement | None = None) -> list[ClauseType]:
    """The types a run of ``engagement`` extracts (``extraction.catalog.scope``; None: the global catalog)."""
    if not ClauseType.objects.exists():
        ensure_catalog()
    return list(scope.active_types(engagement))


def create_run(
    engagement: Engagement,
    *,
    documents: Iterable[Document] | None = None,
    clause_types: Iterable[ClauseType] | None = None,
    engine: str | None = None,
    user: User | None = None,
    enqueue: bool = True,
    queue: str | None = None,
    mode: str = ExtractionRun.Mode.SYNC,
) -> ExtractionRun:
    """A run over ``documents`` (default: the engagement's ready documents) x ``clause_types``
    (default: every type active in the engagement), queued for the workers when the transaction commits."""
    name = resolve_engine_name(engine)
    docs = (
        list(documents)
        if documents is not None
        else list(engagement.documents.filter(status=Document.Status.READY))
    )
    types = list(clause_types) if clause_types is not None else active_types(engagement)
    with transaction.atomic():
        run = ExtractionRun.objects.create(
            engagement=engagement, created_by=user, engine=name, model=engine_model(name), mode=mode
        )
        ClauseTask.objects.bulk_create(
            [ClauseTask(run=run, document=d, clause_type=t) for d in docs for t in types]
        )
        if enqueue:
            transaction.on_commit(lambda: run_created.send(ExtractionRun, run_id=run.pk, queue=queue))
    return run


def extract_ready_document(
    document_id: int, *, user_id: int | None = None, engine: str | None = None
) -> ExtractionRun | None:
    """A run over one document and every active clause type, queued, if the document is ready and
    no run over it has started since it became ready (a redelivered task creates no second run)."""
    document = Document.objects.filter(pk=document_id, status=Document.Status.READY).defer("text").first()
    if document is None:
        return None
    ready_at = document.stages.aggregate(t=Max("finished_at"))["t"]
    if ready_at and ClauseTask.objects.filter(document=document, run__created_at__gte=ready_at).exists():
        return None
    user = get_user_model().objects.filter(pk=user_id).first() if user_id else None
    return create_run(document.engagement, documents=[document], engine=engine, user=user)


def extract_after_ingest(user_id: int | None) -> Callable[[int], Signature]:
    """The ``then`` of ``ingest.intake.intake_file`` for an upload with "extract" ticked: the document's
    pipeline ends with ``extract_when_ready``, which runs ``extract_ready_document`` for ``user_id``."""
    return lambda document_id: current_app.signature(
        EXTRACT_WHEN_READY, args=(document_id, user_id), immutable=True
    )


def extract_on_upload(document: Document, *, user_id: int | None) -> str:
    """An upload, with "extract" ticked, of a document the engagement holds already: a ready document whose
    clauses no run has extracted is extracted now; one that a run extracted is left as it is (Bulk extract
    runs it again). Returns what the upload page says about its clauses ("" for a document not ready)."""
    if document.status != Document.Status.READY:
        return ""
    if ClauseTask.objects.filter(document=document).exists():
        return "its clauses were extracted before (Bulk extract runs them again)"
    extract_ready_document(document.pk, user_id=user_id)
    return "its clauses are being extracted"


def types_for(run: ExtractionRun) -> list[catalog.ClauseType]:
    """Plain clause types the run's prompts know: the types active in the run's engagement plus the run's
    own types."""
    rows = {t.pk: t for t in scope.active_types(run.engagement)}
    rows.update({t.pk: t for t in ClauseType.objects.filter(clausetask__run=run).distinct()})
    return [as_plain(t) for t in sorted(rows.values(), key=lambda t: (catalog_order(t.name), t.name))]
