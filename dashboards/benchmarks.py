"""Benchmark sets and runs: register a corpus, run ``evaluate`` on it, import its predictions.

Thin glue: file reading is in :mod:`dashboards.corpus`, judging in :mod:`extraction.evaluation.stratify`.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import cast

from django.conf import settings
from django.core.management import call_command
from django.db import transaction
from django.dispatch import Signal
from django.utils import timezone

from dashboards import conf
from dashboards.alerts import sync_benchmark_alerts
from dashboards.corpus import (
    CorpusError,
    gold_first_page,
    gold_span_texts,
    load_documents,
    load_gold,
    read_jsonl,
    summarise,
    write_absent_only,
)
from dashboards.models import BenchmarkOutcome, BenchmarkRun, BenchmarkSet
from extraction.evaluation.stratify import (
    NOT_FOUND,
    NOT_RUN,
    benchmark_passes,
    best_answer_jaccard,
    citation_quotes,
)

log = logging.getLogger(__name__)

# Sent on commit of the transaction that queued a benchmark run (``enqueue``); argument ``run_id``.
benchmark_queued = Signal()

CLAUSE_TEXT_KEEP = 2000  # characters of an answer kept per outcome (enough to read an invented clause)


class ImportRefused(ValueError):
    """An import that would change whose benchmark set a name refers to (the message says why)."""


def import_set(
    path,
    name: str = "",
    *,
    engagement=None,
    user=None,
    credit: str | None = None,
    weekly_silent_source: bool = True,
) -> BenchmarkSet:
    """Validate a cuad-dev-format folder and register (or refresh) it as a BenchmarkSet.

    A name is unique across all engagements, so refreshing is allowed only within the set's own scope:
    a name held by a set of another engagement (or by a shared set when importing for an engagement, or
    by a private set when importing a shared one) raises ImportRefused, and a refresh never changes
    ``engagement``. Otherwise an import could take over another engagement's set and its runs.
    """
    summary = summarise(Path(path))
    name = name or summary.path.name
    values = {
        "path": str(summary.path),
        "credit": summary.credit if credit is None else credit,
        "document_count": summary.document_count,
        "pair_count": summary.pair_count,
        "absent_count": summary.absent_count,
        "contract_types": summary.contract_types,
        "gold_sha256": summary.gold_sha256,
        "weekly_silent_source": weekly_silent_source,
    }
    with transaction.atomic():
        existing = BenchmarkSet.objects.select_for_update().filter(name=name).first()
        if existing is not None and existing.engagement_id != (engagement.pk if engagement else None):
            raise ImportRefused(
                f"the name “{name}” is taken by another benchmark set; import under another name"
            )
        benchmark_set, created = BenchmarkSet.objects.update_or_create(
            name=name,
            defaults=values,
            create_defaults={**values, "engagement": engagement, "created_by": user},
        )
    log.info(
        "benchmark set %s %s: %d documents, %d pairs (%d absent)",
        benchmark_set.name,
        "registered" if created else "refreshed",
        summary.document_count,
        summary.pair_count,
        summary.absent_count,
    )
    return benchmark_set


@dataclass
class ImportResult:
    outcomes: int
    unmatched: int  # prediction lines with no gold pair (ignored)
    missing: int  # gold pairs of predicted documents that have no prediction line (not scored)


def _first_citation_page(extraction: dict) -> int | None:
    for citation in extraction.get("citations") or []:
        if citation.get("page") is not None:
            return int(citation["page"])
    return None


def _clause_text(extraction: dict) -> str:
    text = extraction.get("clause_text") or ""
    if text and text != NOT_FOUND:
        return text
    return " ".join(c.get("quote", "") for c in extraction.get("citations") or [])


def judge(prediction: dict, gold_row: dict, doc_type: str) -> BenchmarkOutcome:
    """One predictions.jsonl line against its gold.jsonl line -> an unsaved outcome."""
    extraction = prediction.get("extraction") or {}
    status = extraction.get("status") or "missing"
    text = _clause_text(extraction) if status != NOT_FOUND else ""
    quotes = citation_quotes(extraction.get("citations") or [])
    present = bool(gold_row["present"])
    spans = gold_span_texts(gold_row)
    page, page_from = _first_citation_page(extraction), "citation"
    if page is None and present:
        # A missed clause cites nothing; place it where gold says the clause is, so misses deep in a
        # long contract show up in the back-section strata instead of vanishing into "no citation".
        page, page_from = gold_first_page(gold_row), "gold"
    return BenchmarkOutcome(
        doc=prediction["doc"],
        doc_type=doc_type,
        clause_type=prediction["clause_type"],
        present=present,
        status=status,
        page=page,
        page_from=page_from if page is not None else "",
        passed=benchmark_passes(present, status, text, spans, quotes=quotes),
        best_jaccard=(
            round(best_answer_jaccard(text, quotes, spans), 4) if present and status == "found" else None
        ),
        clause_text=text[:CLAUSE_TEXT_KEEP],
    )


def import_predictions(run: BenchmarkRun, predictions_path, gold_path, documents_path) -> ImportResult:
    """Judge ``predictions.jsonl`` against ``gold.jsonl`` and store one outcome per pair of ``run``.

    Idempotent: a second import replaces the run's outcomes. Pairs of documents that were not predicted
    (``--limit``) are not scored; pairs of predicted documents that lack a line are counted as missing.
    Absent pairs that got no answer (status failed or missing) stay outside the silent-source counts.
    """
    gold = load_gold(Path(gold_path))
    documents = load_documents(Path(documents_path))
    outcomes: dict[tuple[str, str], BenchmarkOutcome] = {}
    unmatched = 0
    for prediction in read_jsonl(Path(predictions_path)):
        # the JSON values as they are (a line lacking one matches no gold pair)
        key = cast("tuple[str, str]", (prediction.get("doc"), prediction.get("clause_type")))
        if key not in gold:
            unmatched += 1
            continue
        doc_type = documents.get(key[0], {}).get("contract_type", "")
        outcome = judge(prediction, gold[key], doc_type)
        outcome.run = run
        outcomes[key] = outcome
    predicted_docs = {doc for doc, _ in outcomes}
    missing = sum(1 for doc, clause in gold if doc in predicted_docs and (doc, clause) not in outcomes)

    rows = list(outcomes.values())
    present = [o for o in rows if o.present]
    absent = [
        o for o in rows if not o.present and o.status not in NOT_RUN
    ]  # no answer: outside silent source
    with transaction.atomic():
        run.outcomes.all().delete()
        BenchmarkOutcome.objects.bulk_create(rows, batch_size=1000)
        run.n, run.passes = len(rows), sum(o.passed for o in rows)
        run.present_n, run.present_passes = len(present), sum(o.passed for o in present)
        run.silent_n, run.silent = len(absent), sum(o.status == NOT_FOUND for o in absent)
        run.metrics = {
            **run.metrics,
            "import": {"outcomes": len(rows), "unmatched": unmatched, "missing": missing},
        }
        run.save(
            update_fields=["n", "passes", "present_n", "present_passes", "silent_n", "silent", "metrics"]
        )
    if unmatched or missing:
        log.warning(
            "benchmark run %s: %d prediction line(s) without gold, %d gold pair(s) without prediction",
            run.pk,
            unmatched,
            missing,
        )
    return ImportResult(outcomes=len(rows), unmatched=unmatched, missing=missing)


def load_metrics(run: BenchmarkRun, metrics_path) -> None:
    """Keep the evaluate command's metrics.json on the run (and its engine/model when it names them)."""
    path = Path(metrics_path)
    if not path.is_file():
        return
    metrics = json.loads(path.read_text(encoding="utf-8"))
    run.metrics = {**metrics, "import": run.metrics.get("import", {})}
    for field in ("engine", "model"):
        value = metrics.get(field)
        if isinstance(value, str) and value and not getattr(run, field):
            setattr(run, field, value[:100])
    run.save(update_fields=["metrics", "engine", "model"])


def new_run(
    benchmark_set: BenchmarkSet,
    *,
    engine: str = "",
    scope: str = BenchmarkRun.Scope.ALL,
    trigger: str = BenchmarkRun.Trigger.UI,
    limit: int | None = None,
    k: int | None = None,
    user=None,
) -> BenchmarkRun:
    engine = engine or conf.get("BENCHMARK_ENGINE")
    model = settings.ANTHROPIC_MODEL if engine == "anthropic" else ""
    return BenchmarkRun.objects.create(
        benchmark_set=benchmark_set,
        engine=engine,
        model=model,
        scope=scope,
        trigger=trigger,
        limit=limit,
        k=k or int(conf.get("BENCHMARK_K")),
        created_by=user,
    )


def enqueue(run: BenchmarkRun) -> None:
    """Start ``run`` on a worker once the transaction that created it commits: ``benchmark_queued`` is sent
    then, and its receiver in ``dashboards.signals`` queues ``dashboards.tasks.run_benchmark``.

    The row is committed by then, so a broker that is down must not turn the request into an error:
    the run is marked failed with the reason instead (``not_queued``; and ``robust`` keeps any other
    error in the callback from escaping).
    """
    transaction.on_commit(partial(benchmark_queued.send, BenchmarkRun, run_id=run.pk), robust=True)


def not_queued(run_id: int, exc: Exception) -> None:
    """The queue did not take the run: it is marked failed with the reason, so nobody waits for it."""
    BenchmarkRun.objects.filter(pk=run_id, status=BenchmarkRun.Status.QUEUED).update(
        status=BenchmarkRun.Status.FAILED,
        finished_at=timezone.now(),
        error=f"The run could not be queued ({type(exc).__name__}: {exc}). Start a new run."[:4000],
    )
    log.exception("benchmark run %s could not be queued", run_id)


class AlreadyClaimed(RuntimeError):
    """The run is not queued any more: another worker has it (a redelivered message) or it finished."""


def execute(run: BenchmarkRun) -> BenchmarkRun:
    """Run ``evaluate`` for a queued ``run`` and import what it wrote; records failure on the run and
    re-raises.

    The queued -> running step is atomic, so a message redelivered while the first worker still runs
    (a long run outlives the broker's visibility timeout) cannot start the same run twice.
    """
    out = conf.runs_dir() / f"run-{run.pk}"
    claimed = BenchmarkRun.objects.filter(pk=run.pk, status=BenchmarkRun.Status.QUEUED).update(
        status=BenchmarkRun.Status.RUNNING, started_at=timezone.now(), out_dir=str(out), error=""
    )
    run.refresh_from_db()
    if not claimed:
        raise AlreadyClaimed(f"benchmark run {run.pk} is {run.status}, not queued")
    try:
        corpus = Path(run.benchmark_set.path)
        if not (corpus / "gold.jsonl").is_file():
            raise CorpusError(f"the corpus folder {corpus} has no gold.jsonl any more")
        out.mkdir(parents=True, exist_ok=True)
        if run.scope == BenchmarkRun.Scope.ABSENT:
            corpus = write_absent_only(corpus, out / "corpus")
        options = {"out": str(out / "eval"), "k": run.k}
        if run.limit:
            options["limit"] = run.limit
        if run.engine:
            options["engine"] = run.engine
        call_command(conf.get("EVALUATE_COMMAND"), str(corpus), **options)
        _import_output(run, corpus, out / "eval")
    except BaseException as exc:
        _record_failure(run, exc)
        raise
    run.status, run.finished_at = BenchmarkRun.Status.DONE, timezone.now()
    run.save(update_fields=["status", "finished_at"])
    sync_benchmark_alerts(run)
    return run


def _import_output(run: BenchmarkRun, corpus: Path, out: Path) -> None:
    """Judge and keep an ``evaluate`` output folder on ``run``; CorpusError when it holds nothing to judge."""
    if not (out / "predictions.jsonl").is_file():
        raise CorpusError(f"{out} has no predictions.jsonl (evaluate writes it in its --out folder)")
    result = import_predictions(
        run, out / "predictions.jsonl", corpus / "gold.jsonl", corpus / "documents.jsonl"
    )
    load_metrics(run, out / "metrics.json")
    if result.outcomes == 0:
        raise CorpusError("evaluate wrote no prediction that matches the gold pairs")


def _record_failure(run: BenchmarkRun, exc: BaseException) -> None:
    BenchmarkRun.objects.filter(pk=run.pk).update(
        status=BenchmarkRun.Status.FAILED,
        finished_at=timezone.now(),
        error=f"{type(exc).__name__}: {exc}"[:4000],
    )
    log.exception("benchmark run %s failed", run.pk)


def fail_abandoned_runs(now=None) -> int:
    """Mark failed the runs still "running" long after any worker could still be on them, and the runs still
    "queued" past ``BENCHMARK_QUEUED_MAX_AGE`` (their message was lost); either would block the weekly
    silent-source run of their set for good. A worker that gets such a message late skips it (not queued)."""
    now = now or timezone.now()
    running_cutoff = now - timedelta(seconds=int(conf.get("BENCHMARK_TIME_LIMIT")) + 600)
    count = BenchmarkRun.objects.filter(
        status=BenchmarkRun.Status.RUNNING, started_at__lt=running_cutoff
    ).update(
        status=BenchmarkRun.Status.FAILED,
        finished_at=now,
        error="Abandoned: still running past the time limit (the worker was lost). Start a new run.",
    )
    queued_cutoff = now - timedelta(seconds=int(conf.get("BENCHMARK_QUEUED_MAX_AGE")))
    count += BenchmarkRun.objects.filter(
        status=BenchmarkRun.Status.QUEUED, created_at__lt=queued_cutoff
    ).update(
        status=BenchmarkRun.Status.FAILED,
        finished_at=now,
        error="Abandoned: still queued long after it was created (no worker took it). Start a new run.",
    )
    if count:
        log.warning("%d abandoned benchmark run(s) marked failed", count)
    return count


def import_existing(run: BenchmarkRun, out_dir) -> BenchmarkRun:
    """Record an ``evaluate`` output folder that already exists as a finished run of ``run``'s set; records
    failure on the run and re-raises (a run left queued would keep the set's weekly silent-source run
    from starting until it is swept as abandoned)."""
    corpus, out = Path(run.benchmark_set.path), Path(out_dir)
    run.out_dir, run.started_at = str(out), run.started_at or timezone.now()
    try:
        _import_output(run, corpus, out)
    except BaseException as exc:
        _record_failure(run, exc)
        raise
    run.status, run.finished_at = BenchmarkRun.Status.DONE, timezone.now()
    run.save(update_fields=["status", "finished_at", "out_dir", "started_at"])
    sync_benchmark_alerts(run)
    return run
