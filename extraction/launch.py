"""Launching extraction runs: one row per unit of work first, then the work queued on commit.

``create_run`` writes the run and one ``ClauseTask`` per (document, clause type) in one transaction
and, when the transaction commits, sends ``run_created``; the receiver in ``extraction.signals``
queues one Celery task per document (``extraction.tasks.queue_run``). ``extract_ready_document`` is
the one place that decides whether an upload's document is extracted when it becomes ready.
"""

from __future__ import annotations

from typing import Iterable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Max
from django.dispatch import Signal

from extraction import catalog
from extraction.catalog.sync import as_plain, catalog_order, ensure_catalog
from extraction.engines import resolve_engine_name
from extraction.models import ClauseTask, ClauseType, ExtractionRun
from extraction.offline.engine import OfflineEngine
from ingest.models import Document

# Sent on commit of a run created with ``enqueue=True``; arguments ``run_id`` and ``queue``.
run_created = Signal()


def engine_model(engine: str) -> str:
    if engine == "anthropic":
        return settings.ANTHROPIC_MODEL
    return OfflineEngine(use_embeddings=False).model


def active_types() -> list[ClauseType]:
    if not ClauseType.objects.exists():
        ensure_catalog()
    return list(ClauseType.objects.filter(active=True))


def create_run(engagement, *, documents: Iterable[Document] | None = None,
               clause_types: Iterable[ClauseType] | None = None, engine: str | None = None,
               user=None, enqueue: bool = True, queue: str | None = None,
               mode: str = ExtractionRun.Mode.SYNC) -> ExtractionRun:
    """A run over ``documents`` (default: the engagement's ready documents) x ``clause_types``
    (default: every active type), queued for the workers when the transaction commits."""
    name = resolve_engine_name(engine)
    docs = list(documents) if documents is not None else list(
        engagement.documents.filter(status=Document.Status.READY))
    types = list(clause_types) if clause_types is not None else active_types()
    with transaction.atomic():
        run = ExtractionRun.objects.create(engagement=engagement, created_by=user, engine=name,
                                           model=engine_model(name), mode=mode)
        ClauseTask.objects.bulk_create([ClauseTask(run=run, document=d, clause_type=t) for d in docs for t in types])
        if enqueue:
            transaction.on_commit(lambda: run_created.send(ExtractionRun, run_id=run.pk, queue=queue))
    return run


def extract_ready_document(document_id: int, *, user_id: int | None = None,
                           engine: str | None = None) -> ExtractionRun | None:
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


def types_for(run: ExtractionRun) -> list[catalog.ClauseType]:
    """Plain clause types the run's prompts know: the active catalog plus the run's own types."""
    rows = {t.pk: t for t in ClauseType.objects.filter(active=True)}
    rows.update({t.pk: t for t in ClauseType.objects.filter(clausetask__run=run).distinct()})
    return [as_plain(t) for t in sorted(rows.values(), key=lambda t: (catalog_order(t.name), t.name))]
