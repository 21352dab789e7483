"""What the batch page shows, read from rows (no API call).

``run_summary(run)``: the run's clause tasks by status, its batches, tokens and cost;
``failed_items(run)``: the requests failed for a person to look at, with their errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count, F, Q, Window
from django.db.models.functions import RowNumber

from bulk.models import BatchItem, BatchJob
from extraction import run_status
from extraction.models import ClauseTask, ExtractionRun


def number(run: ExtractionRun) -> int:
    """A bulk run's number in its engagement (1 for its first): run ids are shared with every other run (an
    upload's extraction, Find a clause, a benchmark), so an id says nothing of the bulk runs before it."""
    return ExtractionRun.objects.filter(
        engagement_id=run.engagement_id, mode=ExtractionRun.Mode.BATCH, pk__lte=run.pk
    ).count()


def shown_status(status: str, *, running: int, done: int, failed: int) -> str:
    """The status shown beside a run's progress, so that the two agree: a run one of whose clause tasks is in
    progress or finished has started, whatever its row still says (never "queued" beside "1 in progress")."""
    if status == ExtractionRun.Status.QUEUED and (running or done or failed):
        return ExtractionRun.Status.RUNNING
    return status


@dataclass
class RunSummary:
    run: ExtractionRun
    counts: dict
    jobs: list
    items: dict  # BatchItem state -> count (anthropic runs)
    documents: int
    clause_types: list
    number: int  # in its engagement

    @property
    def status(self) -> str:
        c = self.counts
        return shown_status(
            self.run.status, running=c.get("running", 0), done=c.get("done", 0), failed=c.get("failed", 0)
        )

    @property
    def percent(self) -> int:
        total = self.counts.get("total") or 0
        finished = (self.counts.get("done") or 0) + (self.counts.get("failed") or 0)
        return int(100 * finished / total) if total else 0

    @property
    def active(self) -> bool:
        return self.run.status in ("queued", "running") or any(j.is_active for j in self.jobs)

    @property
    def retries(self) -> int:
        return sum(j.retries for j in self.jobs)

    @property
    def batch_cost(self) -> Decimal:
        """What the batches' results cost, at the batch price."""
        return sum((j.cost_usd for j in self.jobs), Decimal(0))

    @property
    def standard_cost(self) -> Decimal:
        """The rest of the run's cost: its ordinary Messages calls (an untyped contract's type question),
        billed at the standard price."""
        return self.run.cost_usd - self.batch_cost

    @property
    def tokens(self) -> int:
        r = self.run
        return r.input_tokens + r.output_tokens + r.cache_read_tokens + r.cache_write_tokens


def run_summary(run: ExtractionRun) -> RunSummary:
    jobs = list(BatchJob.objects.filter(run=run).order_by("sequence"))
    items = dict(
        BatchItem.objects.filter(run=run)
        .values_list("state")
        .annotate(n=Count("id"))
        .values_list("state", "n")
    )
    tasks = ClauseTask.objects.filter(run=run)
    docs = tasks.values("document_id").distinct().count()
    types = list(tasks.values_list("clause_type__name", flat=True).distinct().order_by("clause_type__name"))
    return RunSummary(run, run_status.counts(run), jobs, items, docs, types, number(run))


def document_rows(run: ExtractionRun, limit: int = 200) -> list[dict]:
    """The run's documents (the first ``limit`` by title) with their clause tasks done, failed and in all:
    where its results are read and reviewed."""
    S = ClauseTask.Status
    return list(
        ClauseTask.objects.filter(run=run)
        .values("document_id", "document__title")
        .annotate(
            total=Count("id"),
            done=Count("id", filter=Q(status=S.DONE)),
            failed=Count("id", filter=Q(status=S.FAILED)),
        )
        .order_by("document__title", "document_id")[:limit]
    )


def failed_items(run: ExtractionRun, limit: int = 200) -> list[dict]:
    """Failed requests (batch path) or failed clause tasks (offline path), with their errors."""
    tasks = (
        ClauseTask.objects.filter(run=run, status=ClauseTask.Status.FAILED)
        .select_related("document", "clause_type", "batch_item")
        .defer("document__text")
        .order_by("id")[:limit]
    )
    out = []
    for t in tasks:
        item = getattr(t, "batch_item", None)
        out.append(
            {
                "document": t.document,
                "clause_type": t.clause_type.name,
                "error": t.error,
                "custom_id": item.custom_id if item else "",
                "batches": item.batches if item else None,
                "last_result": item.last_result if item else "",
            }
        )
    return out


def bulk_runs(queryset):
    """Bulk runs with their task counts and their number in their engagement annotated (for the list)."""
    S = ClauseTask.Status
    return (
        queryset.filter(mode="batch")
        .select_related("engagement")
        .annotate(
            n_tasks=Count("tasks", distinct=True),
            n_done=Count("tasks", filter=Q(tasks__status=S.DONE), distinct=True),
            n_failed=Count("tasks", filter=Q(tasks__status=S.FAILED), distinct=True),
            n_running=Count("tasks", filter=Q(tasks__status=S.RUNNING), distinct=True),
            n_batches=Count("batch_jobs", distinct=True),
            number=Window(RowNumber(), partition_by=[F("engagement_id")], order_by=F("id").asc()),
        )
        .order_by("-created_at")
    )


def listed(queryset, limit: int = 100) -> list[ExtractionRun]:
    """The latest ``limit`` bulk runs of ``queryset``, each with ``shown_status``."""
    runs = list(bulk_runs(queryset)[:limit])
    for r in runs:
        counts = {k: getattr(r, f"n_{k}") for k in ("running", "done", "failed")}  # annotated by bulk_runs
        r.shown_status = shown_status(r.status, **counts)
    return runs
