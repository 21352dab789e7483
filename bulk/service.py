"""One action for a bulk run: ``start_bulk(engagement, clause_types=..., documents=...)``.

* anthropic engine: an ``ExtractionRun`` (mode ``batch``) with its ``ClauseTask`` rows and
  one ``BatchItem`` each, written in one transaction; the requests are submitted as
  Message Batches when it commits (a Celery task, or here with ``submit_now``).
* offline engine: the same run and task rows, fanned out as Celery work, one task per
  document (``extraction.tasks.extract_document``), spread over the workers; progress and
  idempotency are the synchronous pipeline's.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from django.conf import settings
from django.db import transaction

from bulk.custom_ids import custom_id
from bulk.models import BatchItem
from engagements.models import Engagement
from extraction import runs
from extraction.engines import resolve_engine_name
from extraction.models import ClauseTask, ClauseType, ExtractionRun
from ingest.models import Document


class BulkError(ValueError):
    """The bulk run cannot start; the message says why."""


def resolve_clause_types(values: Iterable[str | ClauseType]) -> list[ClauseType]:
    """Clause types by row, name (exact, then case-insensitive) or slug; BulkError for unknown ones."""
    out: list[ClauseType] = []
    unknown: list[str] = []
    for value in values:
        if isinstance(value, ClauseType):
            row = value
        else:
            text = str(value).strip()
            row = (ClauseType.objects.filter(name=text).first() or ClauseType.objects.filter(name__iexact=text).first()
                   or ClauseType.objects.filter(slug=text).first())
        if row is None:
            unknown.append(str(value))
        elif row not in out:
            out.append(row)
    if unknown:
        raise BulkError(f"unknown clause type(s): {', '.join(unknown)}")
    if not out:
        raise BulkError("choose at least one clause type")
    return out


def resolve_documents(engagement: Engagement, values: Sequence[str | int | Document] | None) -> list[Document]:
    """The engagement's ready documents: all of them, or those named by id, title or file name."""
    ready = engagement.documents.filter(status=Document.Status.READY).defer("text")
    if not values:
        docs = list(ready.order_by("id"))
        if not docs:
            raise BulkError(f"engagement {engagement.name!r} has no ready documents")
        return docs
    out: list[Document] = []
    missing: list[str] = []
    for value in values:
        if isinstance(value, Document):
            row = value if value.engagement_id == engagement.pk and value.status == Document.Status.READY else None
        else:
            text = str(value).strip()
            row = ((ready.filter(pk=int(text)).first() if text.isdigit() else None)
                   or ready.filter(original_name=text).first() or ready.filter(title=text).first())
        if row is None:
            missing.append(str(value))
        elif row not in out:
            out.append(row)
    if missing:
        raise BulkError(f"not ready documents of {engagement.name!r}: {', '.join(missing)}")
    return out


def usable_engine(engine: str | None) -> str:
    """The engine a bulk run will use; BulkError when it cannot run here."""
    try:
        name = resolve_engine_name(engine)
    except ValueError as exc:
        raise BulkError(str(exc)) from None
    if name == "anthropic" and not settings.ANTHROPIC_API_KEY:
        raise BulkError("the Message Batches API needs ANTHROPIC_API_KEY; choose the offline engine")
    return name


def start_bulk(engagement: Engagement, *, clause_types: Iterable[str | ClauseType],
               documents: Sequence[str | int | Document] | None = None, engine: str | None = None, user=None,
               enqueue: bool = True) -> ExtractionRun:
    """Create the bulk run; with ``enqueue`` its work starts when the transaction commits."""
    types = resolve_clause_types(clause_types)
    docs = resolve_documents(engagement, documents)
    name = resolve_engine_name(engine)
    if name == "offline":
        return runs.create_run(engagement, documents=docs, clause_types=types, engine=name, user=user,
                               enqueue=enqueue, mode=ExtractionRun.Mode.BATCH)
    with transaction.atomic():
        run = runs.create_run(engagement, documents=docs, clause_types=types, engine=name, user=user,
                              enqueue=False, mode=ExtractionRun.Mode.BATCH)
        tasks = ClauseTask.objects.filter(run=run).values_list("id", "document_id", "clause_type_id")
        BatchItem.objects.bulk_create([BatchItem(run=run, task_id=pk, custom_id=custom_id(run.pk, doc, ct))
                                       for pk, doc, ct in tasks], batch_size=2000)
        if enqueue:
            from bulk.tasks import submit_run

            transaction.on_commit(lambda: submit_run.delay(run.pk))
    return run
