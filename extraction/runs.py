"""Extraction runs: create one row per unit of work, fan out on commit, derive status from rows.

``create_run`` writes the run and one ``ClauseTask`` per (document, clause type) in
one transaction and enqueues one Celery task per document with
``transaction.on_commit``. A run's status is never pushed by a chord: it is
derived from its task rows by ``refresh_status`` (done when every task is done,
failed when every task is finished and some failed).
"""
from __future__ import annotations

import logging
from typing import Iterable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, F, Max, Q
from django.utils import timezone

from extraction import catalog
from extraction.catalog_sync import as_plain, ensure_catalog
from extraction.engines import resolve_engine_name
from extraction.models import ClauseTask, ClauseType, ExtractionRun
from extraction.usage import Usage, cost_usd
from ingest.models import Document

log = logging.getLogger(__name__)


def engine_model(engine: str) -> str:
    if engine == "anthropic":
        return settings.ANTHROPIC_MODEL
    from extraction.engines.offline import OfflineEngine

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
            transaction.on_commit(lambda: _enqueue_or_say_so(run.pk, queue))
    return run


NOT_QUEUED = "The task queue could not be reached, so this run never started; start it again."


def _enqueue_or_say_so(run_id: int, queue: str | None) -> None:
    """Queue the run; a broker that cannot be reached fails its clause tasks with a sentence saying so
    (the run is saved: without this the request answered 500 and the run stayed queued for ever)."""
    try:
        enqueue_run(run_id, queue=queue)
    except Exception:
        from extraction.pipeline import fail_open_tasks

        log.exception("could not queue run %s", run_id)
        for doc_id in set(ClauseTask.objects.filter(run_id=run_id).values_list("document_id", flat=True)):
            fail_open_tasks(run_id, doc_id, NOT_QUEUED)


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


def enqueue_run(run_id: int, *, queue: str | None = None) -> int:
    """One Celery task per document with open clause tasks; returns how many were sent."""
    from extraction.tasks import extract_document

    doc_ids = (ClauseTask.objects.filter(run_id=run_id, status__in=[ClauseTask.Status.PENDING,
                                                                    ClauseTask.Status.RUNNING])
               .values_list("document_id", flat=True).distinct().order_by("document_id"))
    options = {"queue": queue} if queue else {}
    n = 0
    for doc_id in doc_ids:
        extract_document.apply_async((run_id, doc_id), **options)
        n += 1
    return n


def types_for(run: ExtractionRun) -> list[catalog.ClauseType]:
    """Plain clause types the run's prompts know: the active catalog plus the run's own types."""
    rows = {t.pk: t for t in ClauseType.objects.filter(active=True)}
    rows.update({t.pk: t for t in ClauseType.objects.filter(clausetask__run=run).distinct()})
    from extraction.catalog_sync import catalog_order

    return [as_plain(t) for t in sorted(rows.values(), key=lambda t: (catalog_order(t.name), t.name))]


def counts(run: ExtractionRun) -> dict[str, int]:
    S = ClauseTask.Status
    agg = ClauseTask.objects.filter(run=run).aggregate(
        total=Count("id"), pending=Count("id", filter=Q(status=S.PENDING)),
        running=Count("id", filter=Q(status=S.RUNNING)), done=Count("id", filter=Q(status=S.DONE)),
        failed=Count("id", filter=Q(status=S.FAILED)))
    return {k: int(v or 0) for k, v in agg.items()}


def add_usage(run: ExtractionRun, delta: Usage, *, batch: bool | None = None) -> None:
    """Add tokens spent for ``run`` (and their cost estimate) to its row. ``batch``: whether the tokens
    were billed at the Message Batches rate (default: whether the run is a batch run)."""
    if not any((delta.input_tokens, delta.output_tokens, delta.cache_write_tokens, delta.cache_read_tokens)):
        return
    ExtractionRun.objects.filter(pk=run.pk).update(
        input_tokens=F("input_tokens") + delta.input_tokens, output_tokens=F("output_tokens") + delta.output_tokens,
        cache_write_tokens=F("cache_write_tokens") + delta.cache_write_tokens,
        cache_read_tokens=F("cache_read_tokens") + delta.cache_read_tokens,
        cost_usd=F("cost_usd") + cost_usd(delta, run.model,
                                          batch=run.mode == ExtractionRun.Mode.BATCH if batch is None else batch))


def mark_running(run: ExtractionRun) -> None:
    ExtractionRun.objects.filter(pk=run.pk, status=ExtractionRun.Status.QUEUED).update(
        status=ExtractionRun.Status.RUNNING)


# A run's clause tasks go with their documents: a run whose every document was deleted before it finished
# has none left, and would otherwise say "running" (its page polling) for ever. (evaluate's run of a corpus
# none of whose documents became ready has none either.)
NOTHING_LEFT = ("It has no clause left to extract: its documents were deleted, or none was ready, "
                "before it finished.")


def refresh_status(run: ExtractionRun) -> str:
    """Derive the run's status from its task rows and store it."""
    c = counts(run)
    S = ExtractionRun.Status
    if not c["total"]:  # (a run that had finished keeps its status)
        ExtractionRun.objects.filter(pk=run.pk, status__in=[S.QUEUED, S.RUNNING]).update(
            status=S.FAILED, error=NOTHING_LEFT, finished_at=timezone.now())
        run.refresh_from_db(fields=["status", "error", "finished_at"])
        return run.status
    if c["total"] and c["pending"] == 0 and c["running"] == 0:
        status = S.FAILED if c["failed"] else S.DONE
        error = ""
        if c["failed"]:
            errors = list(ClauseTask.objects.filter(run=run, status=ClauseTask.Status.FAILED)
                          .select_related("clause_type").values_list("clause_type__name", "error")[:5])
            error = f"{c['failed']} of {c['total']} clause tasks failed: " + "; ".join(
                f"{name}: {err[:200]}" for name, err in errors)
        ExtractionRun.objects.filter(pk=run.pk).update(status=status, error=error, finished_at=timezone.now())
    elif c["done"] or c["running"] or c["failed"]:
        status = S.RUNNING
        ExtractionRun.objects.filter(pk=run.pk).exclude(status=S.RUNNING).update(status=status)
    else:
        status = run.status
    run.refresh_from_db(fields=["status", "error", "finished_at"])
    return status
