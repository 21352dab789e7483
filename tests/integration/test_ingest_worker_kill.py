"""A Celery worker killed with SIGKILL in the middle of embedding a 200-page contract, then restarted:
the unacknowledged stage comes back (acks_late + visibility timeout), resumes from the embedding
cache, and the document ends ready with the chunks of an uninterrupted run, each once. While it
embeds, the document's progress moves forward. A stage killed by the hard time limit (its message is
acknowledged: it never comes back) ends the document failed, in words, and an upload retries it."""

from __future__ import annotations

import os
import time

import pytest

from config.celery import app
from demo import make_contract_pdf
from ingest import pipeline
from ingest.chunker import chunk_document
from ingest.intake import intake_file
from ingest.models import Document
from ingest.pages import PageSpan
from tests.integration.ingest_helpers import assert_consistent, stage, wait_terminal
from tests.worker import WorkerProcess

VISIBILITY = 5


@pytest.mark.django_db(transaction=True)
def test_worker_killed_mid_embedding_redelivers_and_ends_ready_with_the_same_chunks(
    engagement, tmp_path, monkeypatch
):
    queue = f"ingest-kill-{os.getpid()}"
    monkeypatch.setitem(app.conf, "task_default_queue", queue)  # only this test's workers take its messages
    env = {"CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY), "CELERY_TASK_DEFAULT_QUEUE": queue}
    first = WorkerProcess("ingest-kill1", env=env).start()
    second = None
    try:
        pdf = make_contract_pdf(tmp_path / "msa.pdf", pages=200, seed=4711)  # its chunks are new to the cache
        document = intake_file(engagement, pdf.path, filename="msa.pdf").document

        seen = []  # (status, overall percent, embed stage percent) while it embeds
        deadline = time.monotonic() + 60
        while True:
            row = Document.objects.get(pk=document.pk)
            embed = stage(row, "embed")
            if row.status == "embedding":
                seen.append((row.progress, embed.progress, embed.detail))
            # kill it once the document's own progress has moved on (the embed stage's first percent or
            # two round to no change of the whole), well before embedding ends
            if embed.status == "running" and len({p for p, _, _ in seen}) >= 2 and embed.progress < 60:
                break
            assert row.status not in ("ready", "failed") and time.monotonic() < deadline, (
                "embedding finished before the kill, or its progress never moved",
                row.status,
                seen[-3:],
                first.log_tail(),
            )
            time.sleep(0.1)
        first.kill()
        killed_at = time.monotonic()
        time.sleep(1)
        row = Document.objects.get(pk=document.pk)
        assert (
            row.status == "embedding" and stage(row, "embed").status == "running"
        )  # what a user sees meanwhile

        time.sleep(max(0.0, VISIBILITY + 1 - (time.monotonic() - killed_at)))
        second = WorkerProcess("ingest-kill2", env=env).start()
        (document,) = wait_terminal([document], timeout=90, worker=second)

        chunks = assert_consistent(document)
        assert document.page_count == 200
        pages = [
            PageSpan(n, s, e) for n, s, e in document.pages.values_list("number", "char_start", "char_end")
        ]
        uninterrupted = chunk_document(document.text, pages)
        assert [
            (c.chunk_id, c.ordinal, c.char_start, c.char_end, c.page_start, c.page_end) for c in chunks
        ] == [
            (s.chunk_id, s.ordinal, s.char_start, s.char_end, s.page_start, s.page_end) for s in uninterrupted
        ]
        embed = stage(document, "embed")
        assert embed.attempts == 2  # the interrupted stage ran again ...
        assert " 0 from cache" not in embed.detail, (
            embed.detail
        )  # ... from the groups embedded before the kill
        assert stage(document, "convert").attempts == stage(document, "chunk").attempts == 1

        # progress during embedding: it moved forward (above), never back, and said how many chunks were done
        overall = [p for p, _, _ in seen]
        assert overall == sorted(overall), seen
        assert any(f"/{len(chunks)} chunks embedded" in d for _, _, d in seen), seen
    finally:
        for w in (first, second):
            if w is not None:
                w.stop()


@pytest.mark.django_db(transaction=True)
def test_a_stage_killed_at_the_hard_time_limit_ends_the_document_failed_and_an_upload_retries_it(
    engagement, tmp_path, monkeypatch
):
    """The soft limit is a signal the stage sees only between Python steps (not inside a long call into a
    C library, nor when something swallows it); the hard limit then kills the process running it. Here
    both are 3 s: the pool sends the soft one and kills the process milliseconds later, while the stage
    is still inside the embedding model (had the stage heard the soft one, the document would end the same)."""
    queue = f"ingest-hard-{os.getpid()}"
    monkeypatch.setitem(app.conf, "task_default_queue", queue)
    env = {
        "CELERY_TASK_TIME_LIMIT": "3",
        "CELERY_TASK_SOFT_TIME_LIMIT": "3",
        "CELERY_TASK_DEFAULT_QUEUE": queue,
    }
    worker = WorkerProcess("ingest-hard", env=env).start()
    try:
        pdf = make_contract_pdf(
            tmp_path / "msa.pdf", pages=200, seed=4712
        )  # embedding it takes far more than 3 s
        document = intake_file(engagement, pdf.path, filename="msa.pdf").document
        (document,) = wait_terminal([document], timeout=40, worker=worker)
    finally:
        worker.stop()
    assert (document.status, document.error_code) == ("failed", "timed_out"), (
        document.status,
        document.error,
    )
    assert "embed stage ran past its time limit" in document.error, document.error
    assert stage(document, "embed").status == "failed"
    assert not document.chunks.exists() and not document.pages.exists()

    again = intake_file(engagement, pdf.path, filename="msa.pdf", enqueue=False)
    assert again.retried and again.document.pk == document.pk
    assert pipeline.run_pipeline(document.pk)
    document.refresh_from_db()
    assert_consistent(document)
