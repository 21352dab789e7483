""" "Find a clause" now, for the reviewer UI: one catalog type or a free question, on one document.

``find_clause(document, user=..., clause_type=... | question=...)`` runs a one-task
extraction run in the calling process (no worker), with the configured engine, and
returns the saved ``Extraction`` (its citations verified by the server). A free
question is saved under an inactive custom clause type named after it, so it never
joins the catalog runs but the reviewer sees what was asked.
"""

from __future__ import annotations

import hashlib

from django.contrib.auth.models import User

from engagements.models import Engagement
from engagements.scoping import require_role
from extraction import catalog, pipeline
from extraction.catalog import scope
from extraction.catalog.sync import ensure_catalog
from extraction.launch import create_run
from extraction.models import ClauseTask, ClauseType, Extraction
from extraction.run_status import fail_open_tasks
from ingest.models import Document


class FindClauseError(Exception):
    """The clause could not be extracted (the engine failed); the message says why."""


def question_type(question: str) -> ClauseType:
    """The inactive custom clause type that carries a free question."""
    question = " ".join(question.split())
    if len(question) < 3:
        raise ValueError("The question is too short.")
    if not any(ch.isalnum() for ch in question):  # "???" would be searched for nothing and "not found"
        raise ValueError(
            "The question has no words: ask it in words, e.g. “Which law governs this agreement?”."
        )
    digest = hashlib.sha1(question.encode()).hexdigest()[:12]
    name = f"{catalog.QUESTION_PREFIX}{question}"
    if len(name) > 100:
        name = f"{name[:86]}… #{digest[:8]}"
    row, _ = ClauseType.objects.get_or_create(
        slug=f"q-{digest}",
        defaults={
            "name": name,
            "description": question,
            "query": question,
            "kind": catalog.TEXT,
            "source": ClauseType.Source.CUSTOM,
            "active": False,
        },
    )
    return row


def resolve_type(clause_type, engagement: Engagement | None = None) -> ClauseType:
    """The clause type named (or slugged) ``clause_type`` among those ``engagement`` sees: the global
    catalog and its own types (the global catalog alone for None). Another engagement's own type is
    unknown here, as if it did not exist."""
    if isinstance(clause_type, ClauseType):
        if clause_type.engagement_id not in (None, getattr(engagement, "pk", None)):
            raise ValueError(f"Unknown clause type {clause_type.name!r}.")
        return clause_type
    ensure_catalog()
    value = str(clause_type)
    types = scope.visible(engagement)
    row = types.filter(name=value).first() or types.filter(slug=value).first()
    if row is None:
        raise ValueError(f"Unknown clause type {value!r}.")
    return row


def find_clause(
    document: Document, *, user: User | None, clause_type=None, question: str | None = None, engine=None
) -> Extraction | None:
    """Extract one clause type (or answer a free question) on ``document`` now; the saved Extraction."""
    if user is not None:
        require_role(user, document.engagement)
    if clause_type is None and not (question and question.strip()):
        raise ValueError("Give a clause type or a question.")
    if document.status != "ready":
        raise ValueError(f"The document is not ready ({document.status}).")
    if clause_type is not None:
        ct = resolve_type(clause_type, document.engagement)
    else:
        assert question is not None  # checked above: a clause type or a question
        ct = question_type(question)
    engine_name = getattr(engine, "name", engine)
    run = create_run(
        document.engagement,
        documents=[document],
        clause_types=[ct],
        engine=engine_name,
        user=user,
        enqueue=False,
    )
    engine_obj = engine if hasattr(engine, "open_session") else None
    try:
        pipeline.process_until_done(run.pk, document.pk, engine=engine_obj)
    except BaseException as exc:  # the run must not stay "running"
        fail_open_tasks(run.pk, document.pk, f"{type(exc).__name__}: {exc}")
        raise
    task = ClauseTask.objects.get(run=run, document=document, clause_type=ct)
    if task.status != ClauseTask.Status.DONE:
        raise FindClauseError(task.error or "the extraction did not finish")
    return Extraction.objects.filter(run=run, document=document, clause_type=ct).order_by("id").first()
