"""One action for a bulk run: ``start_bulk(engagement, clause_types=..., documents=...)``.

* anthropic engine: an ``ExtractionRun`` (mode ``batch``) with its ``ClauseTask`` rows and
  one ``BatchItem`` each, written in one transaction; the requests are submitted as
  Message Batches when it commits (``bulk_run_created`` is sent; its receiver in ``bulk.signals``
  queues the ``bulk.tasks.submit_run`` task; with the queue unreachable, or ``enqueue=False``, the
  beat's poll submits them).
* offline engine: the same run and task rows, fanned out as Celery work, one task per
  document (``extraction.tasks.extract_document``), spread over the workers; progress and
  idempotency are the synchronous pipeline's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.dispatch import Signal

from bulk.custom_ids import custom_id
from bulk.models import BatchItem
from config.params import id_param
from engagements.models import Engagement
from extraction import launch
from extraction.catalog import scope
from extraction.engines import resolve_engine_name
from extraction.models import ClauseTask, ClauseType, ExtractionRun
from ingest.models import Document

# Sent on commit of a Message Batches run started with ``enqueue=True``; argument ``run_id``.
bulk_run_created = Signal()


class BulkError(ValueError):
    """The bulk run cannot start; the message says why."""


def _resolve(values: Iterable, find: Callable, missing_message: str) -> list:
    """``find(value)`` for each value, first occurrences in order; BulkError naming what was not found."""
    out, missing = [], []
    for value in values:
        row = find(value)
        if row is None:
            missing.append(str(value))
        elif row not in out:
            out.append(row)
    if missing:
        raise BulkError(f"{missing_message}: {', '.join(missing)}")
    return out


def resolve_clause_types(
    values: Iterable[str | ClauseType], engagement: Engagement | None = None
) -> list[ClauseType]:
    """Clause types by row, name (exact, then case-insensitive) or slug, among those ``engagement`` sees (the
    global catalog and its own types: another engagement's own type is unknown here); BulkError for unknown
    ones."""
    known = scope.visible(engagement)

    def find(value):
        if isinstance(value, ClauseType):
            return value if known.filter(pk=value.pk).exists() else None
        text = str(value).strip()
        return (
            known.filter(name=text).first()
            or known.filter(name__iexact=text).first()
            or known.filter(slug=text).first()
        )

    out = _resolve(values, find, "unknown clause type(s)")
    if not out:
        raise BulkError("choose at least one clause type")
    return out


def resolve_documents(
    engagement: Engagement, values: Sequence[str | int | Document] | None
) -> list[Document]:
    """The engagement's ready documents: all of them, or those named by id, title or file name."""
    ready = engagement.documents.filter(status=Document.Status.READY).defer("text")
    if not values:
        docs = list(ready.order_by("id"))
        if not docs:
            raise BulkError(f"engagement {engagement.name!r} has no ready documents")
        return docs

    def find(value):
        if isinstance(value, Document):
            return (
                value
                if value.engagement_id == engagement.pk and value.status == Document.Status.READY
                else None
            )
        text, pk = str(value).strip(), id_param(value)
        return (
            (ready.filter(pk=pk).first() if pk is not None else None)
            or ready.filter(original_name=text).first()
            or ready.filter(title=text).first()
        )

    return _resolve(values, find, f"not ready documents of {engagement.name!r}")


def usable_engine(engine: str | None) -> str:
    """The engine a bulk run will use; BulkError when it cannot run here."""
    try:
        name = resolve_engine_name(engine)
    except ValueError as exc:
        raise BulkError(str(exc)) from None
    if name == "anthropic" and not settings.ANTHROPIC_API_KEY:
        raise BulkError("the Message Batches API needs ANTHROPIC_API_KEY; choose the offline engine")
    return name


def start_bulk(
    engagement: Engagement,
    *,
    clause_types: Iterable[str | ClauseType],
    documents: Sequence[str | int | Document] | None = None,
    engine: str | None = None,
    user: User | None = None,
    enqueue: bool = True,
) -> ExtractionRun:
    """Create the bulk run; with ``enqueue`` its work starts when the transaction commits."""
    types = resolve_clause_types(clause_types, engagement)
    docs = resolve_documents(engagement, documents)
    name = resolve_engine_name(engine)
    if name == "offline":
        return launch.create_run(
            engagement,
            documents=docs,
            clause_types=types,
            engine=name,
            user=user,
            enqueue=enqueue,
            mode=ExtractionRun.Mode.BATCH,
        )
    with transaction.atomic():
        run = launch.create_run(
            engagement,
            documents=docs,
            clause_types=types,
            engine=name,
            user=user,
            enqueue=False,
            mode=ExtractionRun.Mode.BATCH,
        )
        tasks = ClauseTask.objects.filter(run=run).values_list("id", "document_id", "clause_type_id")
        BatchItem.objects.bulk_create(
            [BatchItem(run=run, task_id=pk, custom_id=custom_id(run.pk, doc, ct)) for pk, doc, ct in tasks],
            batch_size=2000,
        )
        if enqueue:
            transaction.on_commit(lambda: bulk_run_created.send(ExtractionRun, run_id=run.pk))
    return run
