"""A run's status, derived from its clause task rows, and the tokens it spent.

A run's status is never pushed by a chord: ``refresh_status`` derives it from its task rows (done
when every task is done, failed when every task is finished and some failed) and stores it.
"""

from __future__ import annotations

from django.db.models import Count, F, Q
from django.utils import timezone

from extraction.models import ClauseTask, ExtractionRun
from extraction.usage import Usage, cost_usd

OPEN = (ClauseTask.Status.PENDING, ClauseTask.Status.RUNNING)


def counts(run: ExtractionRun) -> dict[str, int]:
    S = ClauseTask.Status
    agg = ClauseTask.objects.filter(run=run).aggregate(
        total=Count("id"),
        pending=Count("id", filter=Q(status=S.PENDING)),
        running=Count("id", filter=Q(status=S.RUNNING)),
        done=Count("id", filter=Q(status=S.DONE)),
        failed=Count("id", filter=Q(status=S.FAILED)),
    )
    return {k: int(v or 0) for k, v in agg.items()}


def add_usage(run: ExtractionRun, delta: Usage, *, batch: bool | None = None) -> None:
    """Add tokens spent for ``run`` (and their cost estimate) to its row. ``batch``: whether the tokens
    were billed at the Message Batches rate (default: whether the run is a batch run)."""
    if not any((delta.input_tokens, delta.output_tokens, delta.cache_write_tokens, delta.cache_read_tokens)):
        return
    ExtractionRun.objects.filter(pk=run.pk).update(
        input_tokens=F("input_tokens") + delta.input_tokens,
        output_tokens=F("output_tokens") + delta.output_tokens,
        cache_write_tokens=F("cache_write_tokens") + delta.cache_write_tokens,
        cache_read_tokens=F("cache_read_tokens") + delta.cache_read_tokens,
        cost_usd=F("cost_usd")
        + cost_usd(delta, run.model, batch=run.mode == ExtractionRun.Mode.BATCH if batch is None else batch),
    )


def add_rerank_usage(run: ExtractionRun, delta: Usage, model: str, *, calls: int, fallbacks: int) -> None:
    """Add the rerank's questions, fallbacks and tokens (``extraction.agent.rerank``) to ``run``: its own
    fields, its cost (at ``model``'s price, one Messages call each, standard rate) added to the run's too."""
    if not calls and not delta.requests:
        return
    cost = cost_usd(delta, model)
    ExtractionRun.objects.filter(pk=run.pk).update(
        rerank_model=model[:100],
        rerank_calls=F("rerank_calls") + calls,
        rerank_fallbacks=F("rerank_fallbacks") + fallbacks,
        rerank_input_tokens=F("rerank_input_tokens")
        + delta.input_tokens
        + delta.cache_write_tokens
        + delta.cache_read_tokens,
        rerank_output_tokens=F("rerank_output_tokens") + delta.output_tokens,
        rerank_cost_usd=F("rerank_cost_usd") + cost,
        cost_usd=F("cost_usd") + cost,
    )


def mark_running(run: ExtractionRun) -> None:
    ExtractionRun.objects.filter(pk=run.pk, status=ExtractionRun.Status.QUEUED).update(
        status=ExtractionRun.Status.RUNNING
    )


# A run's clause tasks go with their documents: a run whose every document was deleted before it finished
# has none left, and would otherwise say "running" (its page polling) forever. (evaluate's run of a corpus
# none of whose documents became ready has none either.)
NOTHING_LEFT = (
    "It has no clause left to extract: its documents were deleted, or none was ready, before it finished."
)


def refresh_status(run: ExtractionRun) -> str:
    """Derive the run's status from its task rows and store it."""
    c = counts(run)
    S = ExtractionRun.Status
    if not c["total"]:  # (a run that had finished keeps its status)
        ExtractionRun.objects.filter(pk=run.pk, status__in=[S.QUEUED, S.RUNNING]).update(
            status=S.FAILED, error=NOTHING_LEFT, finished_at=timezone.now()
        )
        run.refresh_from_db(fields=["status", "error", "finished_at"])
        return run.status
    if c["total"] and c["pending"] == 0 and c["running"] == 0:
        status: str = S.FAILED if c["failed"] else S.DONE
        error = ""
        if c["failed"]:
            errors = list(
                ClauseTask.objects.filter(run=run, status=ClauseTask.Status.FAILED)
                .select_related("clause_type")
                .values_list("clause_type__name", "error")[:5]
            )
            error = f"{c['failed']} of {c['total']} clause tasks failed: " + "; ".join(
                f"{name}: {err[:200]}" for name, err in errors
            )
        ExtractionRun.objects.filter(pk=run.pk).update(status=status, error=error, finished_at=timezone.now())
    elif c["done"] or c["running"] or c["failed"]:
        status = S.RUNNING
        ExtractionRun.objects.filter(pk=run.pk).exclude(status=S.RUNNING).update(status=status)
    else:
        status = run.status
    run.refresh_from_db(fields=["status", "error", "finished_at"])
    return status


def fail_open_tasks(run_id: int, document_id: int, error: str) -> int:
    """Mark the open tasks of (run, document) failed (an unrecoverable error); returns how many."""
    n = ClauseTask.objects.filter(run_id=run_id, document_id=document_id, status__in=OPEN).update(
        status=ClauseTask.Status.FAILED, error=error[:4000]
    )
    refresh_status(ExtractionRun.objects.get(pk=run_id))
    return n
