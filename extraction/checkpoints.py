"""Checkpoints and CASE_FACTS, from and to the database.

``facts_for`` rebuilds CASE_FACTS from rows every time it is called (the agent calls
it every turn): the document, the run's extractions so far, the engagement's policy
facts, verbatim. ``save`` writes {case_facts, last_record, position, history} in one
transaction under a row lock, so a checkpoint is never half written; callers that
persist an extraction call it inside the same transaction.
"""

from __future__ import annotations

import json
import logging

from django.db import IntegrityError, transaction

from engagements.models import Engagement
from extraction.agent.case_facts import (
    CaseFacts,
    parse_case_facts,
    render_case_facts,
    usable_key,
)
from extraction.models import Checkpoint, Extraction, ExtractionRun
from ingest.models import Document

log = logging.getLogger(__name__)


def clause_id_for(document_id: int, slug: str) -> str:
    """The id a clause question carries (and the model echoes): ``<document id>:<clause slug>``."""
    return f"{document_id}:{slug}"


def _decision(ex: Extraction) -> str:
    cites = list(ex.citations.all())
    where = f" p.{cites[0].page} chunk {cites[0].chunk.chunk_id}" if cites else ""
    return f"{ex.clause_type.name}: {ex.status}{where}"


def _fact_text(value) -> str:
    """A policy fact as the admin wrote it: text as is, any other JSON value as JSON (true, ["a", "b"])."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def facts_for(run: ExtractionRun, document: Document) -> CaseFacts:
    """CASE_FACTS for (run, document), rebuilt from the database."""
    rows = list(
        Extraction.objects.filter(run=run, document=document)
        .select_related("clause_type")
        .prefetch_related("citations__chunk")
        .order_by("id")
    )
    policy = (
        Engagement.objects.filter(pk=run.engagement_id).values_list("policy_facts", flat=True).first() or {}
    )
    if not isinstance(policy, dict):  # saved before the admin checked its shape
        log.warning(
            "engagement %s: policy facts left out of CASE_FACTS: not a JSON object", run.engagement_id
        )
        policy = {}
    policy = dict(policy)
    doc_type = Document.objects.filter(pk=document.pk).values_list("doc_type", flat=True).first()
    cap = policy.pop("policy_cap", None)
    extra = []
    for key, value in sorted(policy.items()):
        key = str(key).strip()
        if not usable_key(key):
            log.warning("policy fact %r skipped in CASE_FACTS: not a usable key", key)
            continue
        extra.append((key, _fact_text(value)))
    last = rows[-1] if rows else None
    return CaseFacts(
        doc_id=str(document.pk),
        doc_type=doc_type or None,
        extracted_count=sum(1 for r in rows if r.status != Extraction.Status.NOT_FOUND),
        last_clause_id=clause_id_for(document.pk, last.clause_type.slug) if last else None,
        policy_cap=_fact_text(cap) if cap not in (None, "") else None,
        decisions=tuple(_decision(r) for r in rows),
        extra=tuple(extra),
    )


def facts_dict(facts: CaseFacts) -> dict:
    """The checkpoint's JSON form (parsed back from the rendered block: values stay verbatim)."""
    return parse_case_facts(render_case_facts(facts))


def load(run: ExtractionRun, document: Document) -> Checkpoint | None:
    return Checkpoint.objects.filter(run=run, document=document).first()


def snapshot_of(checkpoint: Checkpoint | None) -> dict | None:
    if checkpoint is None:
        return None
    return {"history": checkpoint.history or [], "position": checkpoint.position or {}}


def save(
    run: ExtractionRun, document: Document, snapshot: dict, *, last_record: dict | None = None
) -> Checkpoint:
    """Write the checkpoint of (run, document) atomically; CASE_FACTS are rebuilt from the DB here."""
    with transaction.atomic():
        row = _locked_row(run, document)
        values = {
            "case_facts": facts_dict(facts_for(run, document)),
            "position": snapshot.get("position") or {},
            "history": snapshot.get("history") or [],
        }
        if last_record is not None:
            values["last_record"] = last_record
        for k, v in values.items():
            setattr(row, k, v)
        row.save()
        return row


def _locked_row(run: ExtractionRun, document: Document) -> Checkpoint:
    """The checkpoint row of (run, document), made if there is none, locked until the transaction ends.
    Two workers on one document (a redelivered message) may both find none: the second one's insert
    waits for the first one's commit, fails on the unique rule, and it locks the first one's row."""
    row = Checkpoint.objects.select_for_update().filter(run=run, document=document).first()
    if row is not None:
        return row
    try:
        with transaction.atomic():  # a savepoint: the duplicate insert must not spoil the transaction
            Checkpoint.objects.create(run=run, document=document)
    except IntegrityError:
        pass
    return Checkpoint.objects.select_for_update().get(run=run, document=document)
