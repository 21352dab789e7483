"""A verified engine outcome -> one ``Extraction`` with its ``Citation`` rows. Idempotent.

The row is keyed (run, document, clause type, dedupe key): the first verified
chunk id for a found clause, ``not_found`` or ``unverified`` otherwise. Saving the
same outcome twice returns the row saved the first time. Citations carry the
offsets and page the server computed (``verify``), never the model's numbers;
the model's page is kept in ``model_page`` for audit.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.db import IntegrityError, transaction

from extraction.models import Citation, ClauseType, Extraction, ExtractionRun
from extraction.outcome import FOUND, NOT_FOUND, UNVERIFIED, ClauseOutcome
from ingest.models import Chunk, Document


def dedupe_key(outcome: ClauseOutcome) -> str:
    if outcome.status == FOUND and outcome.verification and outcome.verification.citations:
        return outcome.verification.citations[0].chunk_id[:64]
    return NOT_FOUND if outcome.status == NOT_FOUND else UNVERIFIED


def save_outcome(
    run: ExtractionRun,
    document: Document,
    clause_type: ClauseType,
    outcome: ClauseOutcome,
    *,
    engine: str,
    model: str = "",
    chunk_pks: Mapping[str, int] | None = None,
) -> Extraction:
    """Persist ``outcome`` (status found / not_found / unverified); returns the Extraction row.
    ``chunk_pks`` (chunk id -> row id, as a loaded ``DocumentView`` has them) spares a lookup of the
    cited chunks' rows."""
    if outcome.status not in (FOUND, NOT_FOUND, UNVERIFIED):
        raise ValueError(f"cannot persist an outcome with status {outcome.status!r}")
    key = dedupe_key(outcome)
    existing = (
        Extraction.objects.filter(run=run, document=document, clause_type=clause_type, dedupe_key=key)
        .order_by()
        .first()
    )  # (a unique key: no joins to sort)
    if existing is not None:
        return existing
    text = "" if outcome.status == NOT_FOUND else str((outcome.tool_input or {}).get("clause_text", ""))
    verified = list(outcome.verification.citations) if outcome.verification else []
    try:
        with transaction.atomic():
            extraction = Extraction.objects.create(
                run=run,
                document=document,
                clause_type=clause_type,
                status=outcome.status,
                clause_text=text,
                engine=engine,
                model=model[:100],
                dedupe_key=key,
                verification_errors=list(outcome.errors),
                refused_attempts=list(outcome.refused_attempts),
                confidence=outcome.detail.get("confidence"),
                closest=dict(outcome.detail.get("closest") or {}) if outcome.status == NOT_FOUND else {},
                stated=outcome.status == FOUND and bool(outcome.detail.get("stated")),
            )
            chunks = (
                chunk_pks
                if chunk_pks is not None
                else dict(
                    Chunk.objects.filter(document=document, chunk_id__in={v.chunk_id for v in verified})
                    .order_by()
                    .values_list("chunk_id", "id")
                )
            )
            Citation.objects.bulk_create(
                [
                    Citation(
                        extraction=extraction,
                        chunk_id=chunks[v.chunk_id],
                        ordinal=i,
                        page=v.page,
                        start=v.start,
                        end=v.end,
                        quote=v.quote,
                        model_page=v.model_page,
                    )
                    for i, v in enumerate(verified)
                    if v.chunk_id in chunks
                ]
            )
    except IntegrityError:  # saved concurrently by a redelivered task
        return Extraction.objects.get(run=run, document=document, clause_type=clause_type, dedupe_key=key)
    return extraction
