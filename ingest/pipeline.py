"""The ingest pipeline of one document: convert → chunk → embed → index.

Each stage is a function of the document that reads rows, calls a pure core
(:mod:`ingest.convert`, :mod:`ingest.chunker`, :mod:`ingest.embeddings`) and writes rows.
:func:`run_stage` wraps a stage with its bookkeeping (``DocumentStage`` status, attempts and
percent progress; ``Document.status``/``progress``) and its failure handling. Celery tasks
(:mod:`ingest.tasks`) and ``manage.py ingest --wait`` without a worker both call it.

Guarantees:

* Idempotent: a stage already ``done`` is skipped; re-running one converges on the same rows
  (pages are replaced, chunks are upserted by ``chunk_id``), so an ``acks_late`` redelivery
  never duplicates anything. Page, chunk and index writes run under a row lock on the document; a
  delivery that finishes after the document went on never sets its status or progress back.
* Bad input (:class:`ConversionError`) ends the document ``failed`` (or ``needs_ocr``) with
  its ``error_code`` and message, and removes its pages and chunks: nothing half-indexed
  stays searchable. Unexpected errors do the same with code ``internal`` and are re-raised
  so the task is recorded as failed; a stage that keeps killing its worker is given up after
  :data:`MAX_ATTEMPTS` starts (code ``worker_lost``); a stage stopped by Celery's soft time limit, or
  killed at its hard one (:func:`fail_at_time_limit`), fails with code ``timed_out``, in words.
* A document deleted while one of its stages runs ends that stage quietly (no task recorded failed,
  no row written back) at the stage's next progress report (:class:`DocumentGone`; the embed stage reports
  after each group of chunks), not at its end; the stages after it find it gone.
* Only chunks whose text is new to the embedding cache are embedded (re-ingesting a
  changed version re-embeds only the changed chunks).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import timedelta
from functools import partial

import numpy as np
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from config.celery import lost_after_s
from ingest import embeddings
from ingest.chunker import chunk_document
from ingest.convert import convert_file
from ingest.convert_errors import ConversionError
from ingest.doctype import classify as classify_doc_type
from ingest.durations import in_words
from ingest.models import Chunk, Document, DocumentStage, Page
from ingest.ocr import OcrOptions
from ingest.page_view import office_pdf_path
from ingest.pages import PageSpan

log = logging.getLogger(__name__)

STAGES = ("convert", "chunk", "embed", "index")
# Share of the whole pipeline each stage stands for in Document.progress (sums to 100).
WEIGHTS = {"convert": 15, "chunk": 5, "embed": 75, "index": 5}
RUNNING = {
    "convert": Document.Status.CONVERTING,
    "chunk": Document.Status.CHUNKING,
    "embed": Document.Status.EMBEDDING,
    "index": Document.Status.INDEXING,
}
TERMINAL_FAILURES = (Document.Status.FAILED, Document.Status.NEEDS_OCR)
# The statuses a document goes through, in order: none is ever set over a later one (see _set_document).
FORWARD = (Document.Status.QUEUED, *RUNNING.values(), Document.Status.READY)
MAX_ATTEMPTS = 3
PARKED_ORDINAL = 1_000_000_000  # added to kept chunks' ordinals while they are renumbered
PROGRESS_INTERVAL_S = 0.5  # at most this often a progress write per stage (plus 100%)

Progress = Callable[[int], None]


class DocumentGone(Exception):
    """The document was deleted while a stage of it ran: the stage stops at its next progress report."""


class PipelineFailure(Exception):
    """A stage gave up on the document for a reason that is not the file's fault."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


# --------------------------------------------------------------------------- running


def run_pipeline(document_id: int, *, on_stage: Callable[[str, int], None] | None = None) -> bool:
    """Run every stage of the document in order, in this process. True when it is ready."""
    for name in STAGES:
        if not run_stage(document_id, name, on_progress=partial(on_stage, name) if on_stage else None):
            return False
    return True


def run_stage(document_id: int, name: str, *, on_progress: Callable[[int], None] | None = None) -> bool:
    """Run one stage with its bookkeeping. True when the next stage may run.

    False when the document is gone, already failed, or fails here (its row then says why).
    Unexpected exceptions are recorded on the document and re-raised.
    """
    document = Document.objects.filter(pk=document_id).first()
    if document is None or document.status in TERMINAL_FAILURES:
        return False
    stage, _ = DocumentStage.objects.get_or_create(document=document, name=name)
    if stage.status == DocumentStage.Status.DONE:
        return True
    previous = STAGES[: STAGES.index(name)]
    if (
        DocumentStage.objects.filter(document=document, name__in=previous)
        .exclude(status=DocumentStage.Status.DONE)
        .exists()
    ):
        return False  # out of order (a stray redelivery): the stage before it will get here
    if stage.attempts >= MAX_ATTEMPTS:
        _fail(
            document,
            stage,
            "worker_lost",
            f"Processing stopped: the {name} stage was interrupted {stage.attempts} times "
            "(the file may crash the converter).",
        )
        return False

    now = timezone.now()
    DocumentStage.objects.filter(pk=stage.pk).update(
        status=DocumentStage.Status.RUNNING,
        progress=0,
        attempts=stage.attempts + 1,
        started_at=now,
        finished_at=None,
    )
    _set_document(document.pk, RUNNING[name], _overall(name, 0))
    report = _Reporter(document.pk, stage.pk, name, on_progress)
    try:
        detail = STAGE_FUNCTIONS[name](document, report)
    except ConversionError as exc:
        _fail(document, stage, exc.code, exc.message)
        return False
    except PipelineFailure as exc:
        _fail(document, stage, exc.code, exc.message)
        return False
    except DocumentGone:
        log.info("document %s was deleted during its %s stage: stopped", document.pk, name)
        return False
    except SoftTimeLimitExceeded:  # ours, not the file's fault: an upload of the same bytes tries again
        _fail(document, stage, "timed_out", _time_limit_message(name, settings.CELERY_TASK_SOFT_TIME_LIMIT))
        return False
    except Exception as exc:
        if not Document.objects.filter(pk=document.pk).exists():
            # deleted while the stage ran (an admin's delete): its rows went with it, and the stage's
            # writes failed on them; nothing is wrong with the file, and nothing is left to do
            log.info(
                "document %s was deleted during its %s stage (%s)", document.pk, name, type(exc).__name__
            )
            return False
        log.exception("stage %s of document %s failed", name, document.pk)
        _fail(
            document,
            stage,
            "internal",
            f"Processing failed unexpectedly in the {name} stage ({type(exc).__name__}: {exc})."[:2000],
        )
        raise
    if not DocumentStage.objects.filter(pk=stage.pk).update(
        status=DocumentStage.Status.DONE,
        progress=100,
        detail=(detail or "")[:300],
        finished_at=timezone.now(),
    ):
        return False  # deleted while the stage ran, its stage rows with it
    if on_progress:
        on_progress(100)
    if name == STAGES[-1]:
        _set_document(document.pk, Document.Status.READY, 100)
    else:
        _set_document(document.pk, RUNNING[name], _overall(name, 100))
    return True


def fail_at_time_limit(document_id: int, name: str) -> None:
    """The process running the stage was killed at the hard time limit (it did not stop at the soft
    one: a long call into a C library, or a library that swallowed it). Its message is acknowledged
    and never comes back, so the document would otherwise show the stage running indefinitely: it
    ends failed, as at the soft limit."""
    document = Document.objects.filter(pk=document_id).first()
    stage = DocumentStage.objects.filter(
        document_id=document_id, name=name, status=DocumentStage.Status.RUNNING
    ).first()
    if document is None or stage is None or document.status in TERMINAL_FAILURES:
        return
    _fail(document, stage, "timed_out", _time_limit_message(name, settings.CELERY_TASK_TIME_LIMIT))


def fail_stalled() -> int:
    """Fail the documents left showing a running stage that nothing will finish (a task message the
    broker lost, or the next stage never sent because the broker was down just as a stage ended), once
    unchanged for ``config.celery.lost_after_s``. Left alone they would show "embedding 40%"
    indefinitely and could not be retried; failed with code ``worker_lost``, an upload of the same
    bytes retries them. A queued document is left alone: it may wait its turn behind a large batch
    for hours (one whose pipeline never reached the workers is sent again, ``intake.requeue_unsent``).
    Returns how many were failed."""
    cutoff = timezone.now() - timedelta(seconds=lost_after_s())
    stage_of: dict[str, str] = {status: name for name, status in RUNNING.items()}
    failed = 0
    for document_id in Document.objects.filter(
        status__in=RUNNING.values(), updated_at__lt=cutoff
    ).values_list("pk", flat=True):
        with transaction.atomic():
            document = (
                Document.objects.select_for_update()
                .filter(pk=document_id, status__in=RUNNING.values(), updated_at__lt=cutoff)
                .first()
            )
            if document is None:  # it moved on meanwhile
                continue
            name = stage_of[document.status]
            stage, _ = DocumentStage.objects.get_or_create(document=document, name=name)
            if stage.status == DocumentStage.Status.DONE and name != STAGES[-1]:
                name = STAGES[STAGES.index(name) + 1]  # it finished; the next one never came
                stage, _ = DocumentStage.objects.get_or_create(document=document, name=name)
            _fail(
                document,
                stage,
                "worker_lost",
                f"Processing stopped: the {name} stage never finished "
                "(the worker or its task was lost). Upload the file again to retry.",
            )
            failed += 1
    return failed


def _time_limit_message(name: str, seconds: int) -> str:
    return (
        f"Processing stopped: the {name} stage ran past its time limit ({in_words(seconds)}). Upload "
        "the file again to retry; if it stops again, the file may be too large to process here in one piece "
        "(split it)."
    )


class _Reporter:
    """Percent progress of a running stage, written to its rows at most every half second. Each report is also
    a checkpoint: the stage of a document deleted meanwhile stops there (:class:`DocumentGone`)."""

    def __init__(self, document_id: int, stage_id: int, name: str, callback: Callable[[int], None] | None):
        self.document_id, self.stage_id, self.name, self.callback = document_id, stage_id, name, callback
        self._last = 0.0

    def __call__(self, percent: int, detail: str | None = None) -> None:
        if not Document.objects.filter(pk=self.document_id).exists():  # one indexed look, per group of chunks
            raise DocumentGone(self.document_id)
        percent = max(0, min(100, int(percent)))
        now = time.monotonic()
        if percent < 100 and now - self._last < PROGRESS_INTERVAL_S:
            return
        self._last = now
        fields: dict[str, int | str] = {"progress": percent}
        shown: dict[str, str] = {}
        if detail is not None:
            fields["detail"] = detail[:300]
            shown["progress_detail"] = detail[:120]  # the documents table shows it beside the percent
        with transaction.atomic():  # a reader sees the stage and the document at the same point
            DocumentStage.objects.filter(pk=self.stage_id).update(**fields)
            Document.objects.filter(pk=self.document_id, status=RUNNING[self.name]).update(
                progress=_overall(self.name, percent), updated_at=timezone.now(), **shown
            )
        if self.callback:
            self.callback(percent)


def _overall(name: str, percent: int) -> int:
    done = sum(WEIGHTS[s] for s in STAGES[: STAGES.index(name)])
    return min(100, done + WEIGHTS[name] * percent // 100)


def _set_document(document_id: int, status: str, progress: int) -> None:
    """Move the document to ``status``, unless it is already past it: a stage delivered again while its
    first delivery still ran finishes after the document went on (or became ready), and must not set it
    back to a stage every later stage then skips as done."""
    Document.objects.filter(pk=document_id, status__in=FORWARD[: FORWARD.index(status) + 1]).update(
        status=status, progress=progress, progress_detail="", updated_at=timezone.now()
    )


def _fail(document: Document, stage: DocumentStage, code: str, message: str) -> None:
    """End the document failed (or needs_ocr): no pages or chunks of it stay behind."""
    status = Document.Status.NEEDS_OCR if code == "needs_ocr" else Document.Status.FAILED
    with transaction.atomic():
        Document.objects.select_for_update().filter(pk=document.pk).first()
        Chunk.objects.filter(document=document).delete()
        Page.objects.filter(document=document).delete()
        Document.objects.filter(pk=document.pk).update(
            status=status,
            error_code=code[:32],
            error=message,
            text="",
            page_count=0,
            chunk_count=0,
            progress_detail="",
            updated_at=timezone.now(),
        )
        DocumentStage.objects.filter(pk=stage.pk).update(
            status=DocumentStage.Status.FAILED, detail=message[:300], finished_at=timezone.now()
        )
    log.info("document %s %s: %s (%s)", document.pk, status, message, code)


# --------------------------------------------------------------------------- stages


def convert_stage(document: Document, report: _Reporter) -> str:
    """File → Document.text (pages joined by \\f) and one Page row per page; a page read by OCR keeps its
    confidence and word boxes on its row. OCR progress is reported per page ("OCR page 37 of 212")."""
    report(5)

    def ocr_page(done: int, total: int) -> None:
        said = f"OCR page {done} of {total}" if done else f"OCR of {total} page(s) starting"
        report(5 + 85 * done // max(total, 1), said)

    converted = convert_file(
        document.file.path,
        filename=document.original_name,
        max_bytes=settings.MAX_UPLOAD_BYTES,
        ocr=ocr_options(),
        on_ocr_page=ocr_page,
        # LibreOffice's pages of a DOCX, EPUB or HTML file; its PDF is kept for the page view
        layout=lambda _data, kind: office_pdf_path(document, kind).read_bytes(),
    )
    report(90)
    _within_limit("pages", len(converted.pages), settings.MAX_DOCUMENT_PAGES, "MAX_DOCUMENT_PAGES")
    _within_limit("characters", len(converted.text), settings.MAX_DOCUMENT_CHARS, "MAX_DOCUMENT_CHARS")
    with transaction.atomic():
        # two deliveries: one after the other
        Document.objects.select_for_update().filter(pk=document.pk).first()
        Page.objects.filter(document=document).delete()
        Page.objects.bulk_create(
            [
                Page(
                    document=document,
                    number=p.number,
                    char_start=p.char_start,
                    char_end=p.char_end,
                    ocr_confidence=converted.ocr[p.number].confidence if p.number in converted.ocr else None,
                    ocr_words=[list(w) for w in converted.ocr[p.number].words]
                    if p.number in converted.ocr
                    else None,
                )
                for p in converted.pages
            ],
            batch_size=200,
        )
        Document.objects.filter(pk=document.pk).update(
            text=converted.text,
            kind=converted.kind,
            page_count=len(converted.pages),
            pages_estimated=converted.pages_estimated,
            error="",
            error_code="",
        )
        # a document uploaded without a type takes the one its title names (ingest.doctype)
        titled = classify_doc_type(converted.text) if not document.doc_type else None
        if titled:
            Document.objects.filter(pk=document.pk, doc_type="").update(
                doc_type=titled, doc_type_source=Document.TypeSource.TITLE
            )
    estimated = " (estimated)" if converted.pages_estimated else ""
    warnings = f"; {'; '.join(converted.warnings)}" if converted.warnings else ""
    typed = f"; type {titled}, read from its title" if titled else ""
    return (
        f"{converted.kind}: {len(converted.pages)} pages{estimated}, {len(converted.text):,} characters"
        f"{typed}{warnings}"
    )


def ocr_options() -> OcrOptions:
    """OCR as the settings ask: ``OCR_LANGUAGES`` ("eng", "eng+deu") and ``OCR_WORKERS`` (0: every core of
    the worker)."""
    return OcrOptions(languages=settings.OCR_LANGUAGES, workers=settings.OCR_WORKERS)


def chunk_stage(document: Document, report: _Reporter) -> str:
    """Document text → Chunk rows (upserted by chunk_id, so unchanged chunks keep their row)."""
    document.refresh_from_db(fields=["text"])
    pages = [
        PageSpan(n, s, e)
        for n, s, e in Page.objects.filter(document=document).values_list("number", "char_start", "char_end")
    ]
    specs = chunk_document(document.text, pages)
    _within_limit("chunks", len(specs), settings.MAX_DOCUMENT_CHUNKS, "MAX_DOCUMENT_CHUNKS")
    report(60)
    with transaction.atomic():
        Document.objects.select_for_update().filter(pk=document.pk).first()
        kept, created, removed = _upsert_chunks(document, specs)
    return f"{len(specs)} chunks ({created} new, {kept} kept, {removed} removed)"


def _within_limit(what: str, count: int, limit: int, setting: str) -> None:
    """Refuse a document over one of the limits of what a document may cost, before its costly stages."""
    if count > limit:
        raise PipelineFailure(
            "too_large",
            f"This document has {count:,} {what}; the limit is {limit:,} {what} (the {setting} setting). "
            "Split it into parts and upload them.",
        )


def is_large(document_id: int) -> bool:
    """Whether the document has more chunks than ``settings.LARGE_DOCUMENT_CHUNKS``: its embedding would hold
    a worker for minutes (ingest.tasks sends its later stages to the queue of large documents)."""
    limit = settings.LARGE_DOCUMENT_CHUNKS
    return Chunk.objects.filter(document_id=document_id).values("pk")[: limit + 1].count() > limit


def _upsert_chunks(document: Document, specs) -> tuple[int, int, int]:
    existing = dict(Chunk.objects.filter(document=document).values_list("chunk_id", "pk"))
    wanted = {spec.chunk_id for spec in specs}
    removed, _ = Chunk.objects.filter(document=document).exclude(chunk_id__in=wanted).delete()
    # (document, ordinal) is unique: move kept rows out of the way before renumbering them.
    Chunk.objects.filter(document=document).update(ordinal=F("ordinal") + PARKED_ORDINAL)
    kept_rows, new_rows = [], []
    for spec in specs:
        fields = dict(
            ordinal=spec.ordinal,
            text=spec.text,
            char_start=spec.char_start,
            char_end=spec.char_end,
            page_start=spec.page_start,
            page_end=spec.page_end,
            paragraph=spec.paragraph,
            section=spec.section,
        )
        if spec.chunk_id in existing:
            kept_rows.append(
                Chunk(pk=existing[spec.chunk_id], document=document, chunk_id=spec.chunk_id, **fields)
            )
        else:
            new_rows.append(Chunk(document=document, chunk_id=spec.chunk_id, **fields))
    Chunk.objects.bulk_update(
        kept_rows,
        ["ordinal", "char_start", "char_end", "page_start", "page_end", "paragraph", "section"],
        batch_size=500,
    )
    Chunk.objects.bulk_create(new_rows, batch_size=500)
    Document.objects.filter(pk=document.pk).update(chunk_count=len(specs))
    return len(kept_rows), len(new_rows), removed


def embed_stage(document: Document, report: _Reporter) -> str:
    """Embed every chunk text not yet in the embedding cache (batched; progress per batch)."""
    texts = list(Chunk.objects.filter(document=document).order_by("ordinal").values_list("text", flat=True))
    embedder = embeddings.get_embedder()

    def progress(done: int, total: int) -> None:
        report(100 * done // max(total, 1), f"{done}/{total} chunks embedded")

    _, stats = embeddings.embed_texts(texts, embedder=embedder, on_progress=progress)
    return f"{stats.embedded} chunks embedded, {stats.cached} from cache ({embedder.name})"


def index_stage(document: Document, report: _Reporter) -> str:
    """Put each chunk's vector into its row (pgvector HNSW + the generated tsvector index it)."""
    embedder = embeddings.get_embedder()
    rows = list(Chunk.objects.filter(document=document).values_list("pk", "text", "embedding"))
    vectors, _ = embeddings.embed_texts([text for _, text, _ in rows], embedder=embedder)
    report(50)
    changed = []
    for pk, text, current in rows:
        vector = np.asarray(vectors[embeddings.content_hash(text)], dtype=np.float32)
        if current is None or not np.allclose(np.asarray(current, dtype=np.float32), vector, atol=1e-6):
            changed.append(Chunk(pk=pk, embedding=vector))
    with transaction.atomic():
        Document.objects.select_for_update().filter(pk=document.pk).first()
        Chunk.objects.bulk_update(changed, ["embedding"], batch_size=500)
        missing = Chunk.objects.filter(document=document, embedding__isnull=True).count()
    if missing:
        raise PipelineFailure("internal", f"{missing} chunks have no embedding after indexing.")
    return f"{len(rows)} chunks indexed ({len(changed)} vectors written)"


STAGE_FUNCTIONS = {"convert": convert_stage, "chunk": chunk_stage, "embed": embed_stage, "index": index_stage}


def reset_stages(document: Document) -> None:
    """Mark every stage pending again (before re-processing a document)."""
    for name in STAGES:
        DocumentStage.objects.update_or_create(
            document=document,
            name=name,
            defaults=dict(
                status=DocumentStage.Status.PENDING,
                progress=0,
                detail="",
                attempts=0,
                started_at=None,
                finished_at=None,
            ),
        )
