"""One (run, document): its clause tasks, one after another, in one engine session.

For each pending ``ClauseTask``: retrieve the engagement's top K (``Engagement.context_k``; with the
Claude engine and ``CLAUDE_RERANK`` on, the top ``CLAUDE_RERANK_POOL`` of which a small model keeps K,
``extraction.agent.rerank``), ask the engine, then in ONE transaction
save the Extraction (+ Citations), mark the task done, write the checkpoint and
add the usage to the run. A task already done is skipped (a redelivered Celery
message, a rerun), so nothing is done twice and nothing is lost; a task started
``MAX_ATTEMPTS`` times without finishing is failed rather than started again. On
``stop_reason: max_tokens`` the engine has checkpointed; ``process_document``
returns ``"interrupted"`` and the caller opens a fresh session (re-enqueue).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.db import transaction
from django.db.models import F

from extraction import checkpoints, retrieval
from extraction.catalog.sync import as_plain, catalog_order
from extraction.checkpoints import clause_id_for
from extraction.closest import with_closest
from extraction.doc_type import classify_for_run
from extraction.docview import load_document
from extraction.engines import get_engine
from extraction.launch import types_for
from extraction.models import ClauseTask, ExtractionRun
from extraction.outcome import (
    FAILED,
    Engine,
    EngineError,
    Interrupted,
    TransientEngineError,
)
from extraction.persist import save_outcome
from extraction.run_status import (
    OPEN,
    add_rerank_usage,
    add_usage,
    fail_open_tasks,
    mark_running,
    refresh_status,
)
from extraction.usage import Usage
from ingest.models import Document

log = logging.getLogger(__name__)
DONE, INTERRUPTED = "done", "interrupted"
# A clause started this many times without finishing is failed instead of started again: its worker
# died on it each time (out of memory, a hard time limit) and acks_late would redeliver it forever.
# A max_tokens stop is not such a start (it checkpoints; MAX_RESUMES bounds those).
MAX_ATTEMPTS = 5
# A document's session is resumed from its checkpoint at most this many times (max_tokens, the time
# limit, an outage), in the Celery task and in-process alike; then its open clauses are failed.
MAX_RESUMES = 8


class _UsageMeter:
    """Adds a session's usage (and its reranker's) to its run as deltas (safe to call after every clause)."""

    def __init__(self, run: ExtractionRun, session, reranker=None):
        self.run, self.session, self.flushed = run, session, Usage()
        self.reranker, self.reranked = reranker, (Usage(), 0, 0)

    def flush(self) -> None:
        if self.reranker is not None:
            usage, calls, fallbacks = self.reranked
            r = self.reranker
            add_rerank_usage(
                self.run,
                Usage(
                    r.usage.input_tokens - usage.input_tokens,
                    r.usage.output_tokens - usage.output_tokens,
                    r.usage.cache_write_tokens - usage.cache_write_tokens,
                    r.usage.cache_read_tokens - usage.cache_read_tokens,
                    r.usage.requests - usage.requests,
                ),
                r.model,
                calls=r.calls - calls,
                fallbacks=r.fallbacks - fallbacks,
            )
            self.reranked = (Usage() + r.usage, r.calls, r.fallbacks)
        total: Usage = self.session.usage
        add_usage(
            self.run,
            Usage(
                total.input_tokens - self.flushed.input_tokens,
                total.output_tokens - self.flushed.output_tokens,
                total.cache_write_tokens - self.flushed.cache_write_tokens,
                total.cache_read_tokens - self.flushed.cache_read_tokens,
            ),
        )
        self.flushed = Usage(
            total.input_tokens, total.output_tokens, total.cache_write_tokens, total.cache_read_tokens
        )


def process_document(
    run_id: int,
    document_id: int,
    *,
    engine: Engine | None = None,
    retrieve: Callable | None = None,
    k: int | None = None,
    observe: Callable[[dict], None] | None = None,
    deadline: float | None = None,
    resume_later: bool = False,
) -> str:
    """Work through the open clause tasks of (run, document). Returns "done" or "interrupted".

    ``deadline`` (a ``time.monotonic()`` value): once past it, no new clause is started and the call
    returns "interrupted" (every finished clause is checkpointed), so a Celery task stops well inside
    its time limit instead of being cut off in an HTTP wait. At least one clause is worked on per call.
    A ``TransientEngineError`` (the API overloaded or unreachable after the SDK's retries) fails the
    clause with its message, and the clauses after it are not tried (each would wait out the SDK's
    retries again: minutes per clause when the API hangs); with ``resume_later`` (the Celery task,
    which tries again minutes later) it is raised instead, the clause left open. It counts as a start
    of that clause (``MAX_ATTEMPTS``).

    ``k``: the chunks a clause question is shown (default: the engagement's ``context_k``).

    ``observe(event)`` (the evaluate command) is called after each clause with the task, the
    retrieved chunks, the outcome, the saved extraction and the timings; with it, retrieval
    always runs (even when the engine reads a short document whole).
    """
    run = ExtractionRun.objects.select_related("engagement").filter(pk=run_id).first()
    document = Document.objects.filter(pk=document_id).first()
    if run is None or document is None:  # deleted (the document, or its engagement) before its turn came
        gone(run_id, document_id)
        return DONE
    tasks = sorted(
        ClauseTask.objects.filter(run=run, document=document, status__in=OPEN).select_related("clause_type"),
        key=lambda t: (catalog_order(t.clause_type.name), t.clause_type.name),
    )
    if not tasks:
        refresh_status(run)
        return DONE
    mark_running(run)
    engine = engine or get_engine(run.engine)
    retrieve = retrieve or retrieval.retrieve
    k = k or run.engagement.context_k
    view = load_document(document)
    classify_for_run(run, document, view, engine)  # a type for CASE_FACTS when the title named none
    wants_retrieval = getattr(engine, "wants_retrieval", lambda _view: True)
    # the Claude engine's when CLAUDE_RERANK is on (the offline engine has none); none for a text read whole
    reranker = getattr(engine, "reranker", lambda: None)() if wants_retrieval(view) else None
    session_box: dict = {}

    def on_checkpoint(snapshot: dict, reason: str) -> None:
        with transaction.atomic():  # the last clause's record stays; the interruption is added to it
            previous = checkpoints.load(run, document)
            record = dict(previous.last_record or {}) if previous is not None else {}
            checkpoints.save(run, document, snapshot, last_record={**record, "interrupted": reason})
            session_box["meter"].flush()

    session = engine.open_session(
        view,
        facts=lambda: checkpoints.facts_for(run, document),
        types=types_for(run),
        search=retrieval.searcher(document),
        snapshot=checkpoints.snapshot_of(checkpoints.load(run, document)),
        on_checkpoint=on_checkpoint,
    )
    meter = session_box["meter"] = _UsageMeter(run, session, reranker)
    outage = ""  # set by a TransientEngineError: the API is down, the clauses after it are not tried
    for n, task in enumerate(tasks):
        if n and deadline is not None and time.monotonic() > deadline:
            log.info("run %s document %s: time limit near, resuming in a fresh task", run.pk, document.pk)
            return INTERRUPTED
        clause = as_plain(task.clause_type)
        retrieved: list = []
        if outage:
            _fail(run, document, task, f"not tried: {outage}", session, meter)
            continue
        if task.attempts >= MAX_ATTEMPTS:
            _fail(
                run,
                document,
                task,
                f"started {task.attempts} times without finishing (the worker was lost, "
                "or the API unavailable, each time); ask for it again with Find a clause",
                session,
                meter,
            )
            continue
        taken = ClauseTask.objects.filter(pk=task.pk, status__in=OPEN).update(
            status=ClauseTask.Status.RUNNING, attempts=F("attempts") + 1
        )
        if not taken:  # finished or failed meanwhile by another worker (a redelivered message)
            continue
        try:
            t0 = time.perf_counter()
            if reranker is not None:
                retrieved = reranker.choose(clause, retrieve(document, clause, max(k, reranker.pool)), k)
            else:
                retrieved = retrieve(document, clause, k) if (observe or wants_retrieval(view)) else []
            t1 = time.perf_counter()
            outcome = session.extract(clause, clause_id_for(document.pk, clause.slug), retrieved)
            outcome = with_closest(outcome, view, clause, [sc.chunk.chunk_id for sc in retrieved])
            t2 = time.perf_counter()
        except Interrupted as exc:  # checkpointed: this start does not count against MAX_ATTEMPTS
            ClauseTask.objects.filter(pk=task.pk).update(attempts=F("attempts") - 1)
            log.info("run %s document %s interrupted: %s", run.pk, document.pk, exc)
            return INTERRUPTED
        except EngineError as exc:
            if resume_later and isinstance(exc, TransientEngineError):
                meter.flush()
                raise
            if isinstance(exc, TransientEngineError):  # each next clause would wait out the SDK's retries too
                outage = f"{exc}; try again in a few minutes"
            _fail(run, document, task, outage or str(exc), session, meter)
            if observe is not None:
                observe(
                    {
                        "task": task,
                        "clause": clause,
                        "retrieved": retrieved,
                        "outcome": None,
                        "extraction": None,
                        "error": str(exc),
                        "latency_ms": {},
                    }
                )
            continue
        ex = None
        with transaction.atomic():
            locked = ClauseTask.objects.select_for_update().get(pk=task.pk)
            if locked.status == ClauseTask.Status.DONE:
                continue
            if outcome.status == FAILED:
                locked.status, locked.error = ClauseTask.Status.FAILED, "; ".join(outcome.errors)[:4000]
                record: dict[str, str | int] = {
                    "clause_type": clause.name,
                    "status": FAILED,
                    "error": locked.error,
                }
            else:
                ex = save_outcome(
                    run, document, task.clause_type, outcome, engine=engine.name, model=engine.model
                )
                locked.status, locked.error = ClauseTask.Status.DONE, ""
                record = {
                    "clause_type": clause.name,
                    "clause_id": outcome.clause_id,
                    "status": ex.status,
                    "extraction_id": ex.pk,
                    "dedupe_key": ex.dedupe_key,
                }
            locked.save(update_fields=["status", "error", "updated_at"])
            checkpoints.save(run, document, session.snapshot(), last_record=record)
            meter.flush()
        if observe is not None:
            observe(
                {
                    "task": task,
                    "clause": clause,
                    "retrieved": retrieved,
                    "outcome": outcome,
                    "extraction": ex,
                    "latency_ms": {
                        "retrieval": round((t1 - t0) * 1000, 1),
                        "extraction": round((t2 - t1) * 1000, 1),
                    },
                }
            )
    refresh_status(run)
    return DONE


def _fail(
    run: ExtractionRun, document: Document, task: ClauseTask, error: str, session, meter: _UsageMeter
) -> None:
    with transaction.atomic():
        ClauseTask.objects.filter(pk=task.pk).exclude(status=ClauseTask.Status.DONE).update(
            status=ClauseTask.Status.FAILED, error=error[:4000]
        )
        checkpoints.save(
            run,
            document,
            session.snapshot(),
            last_record={"clause_type": task.clause_type.name, "status": FAILED, "error": error[:500]},
        )
        meter.flush()
    log.warning("run %s document %s %s failed: %s", run.pk, document.pk, task.clause_type.name, error)


def gone(run_id: int, document_id: int) -> bool:
    """Whether the run or the document was deleted (their clause tasks went with them: an admin deleted
    the document, or its engagement, while it was worked on). A run still there takes its status from
    the tasks left (none left: failed, in words), so it does not stay "running"."""
    run = ExtractionRun.objects.filter(pk=run_id).first()
    if run is not None and Document.objects.filter(pk=document_id).exists():
        return False
    if run is not None:
        refresh_status(run)
    log.info("run %s document %s: deleted while it was extracted; nothing left to do", run_id, document_id)
    return True


def may_resume(run_id: int, document_id: int, resumes: int, reason: str) -> bool:
    """Whether an interrupted (run, document) may be resumed once more after ``resumes`` resumes;
    when not, its open clause tasks are failed saying why."""
    if resumes < MAX_RESUMES:
        return True
    fail_open_tasks(run_id, document_id, f"interrupted {MAX_RESUMES} times ({reason})")
    return False


def process_until_done(run_id: int, document_id: int, **kwargs) -> str:
    """``process_document`` in this process, a fresh session after each interruption, until done or
    ``MAX_RESUMES`` resumes (then failed). For callers without a worker: Find a clause, ``--inline``."""
    resumes = 0
    while (result := process_document(run_id, document_id, **kwargs)) == INTERRUPTED:
        if not may_resume(run_id, document_id, resumes, "max_tokens"):
            return FAILED
        resumes += 1
    return result
