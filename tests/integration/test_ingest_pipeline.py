"""The ingest pipeline end to end with a real Celery worker, real PostgreSQL+pgvector and Redis:
five document types made by the project's generators, real CUAD contracts, dedup, re-ingest of
a changed version, and idempotent re-runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from demo import (
    make_contract_pdf,
    make_manual_docx,
    make_paper_markdown,
    make_slides_pptx,
    make_workbook_xlsx,
)
from ingest import pipeline
from ingest.intake import IntakeError, intake_file, reprocess
from ingest.models import Chunk, Document, DocumentStage, EmbeddingCache
from taskstate.models import TaskState
from tests.integration.ingest_helpers import (
    assert_consistent,
    chunks_containing,
    stage,
    twice_at_once,
    wait_terminal,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_five_document_types_become_ready_with_exact_pages(celery_worker, engagement, tmp_path):
    contract = make_contract_pdf(tmp_path / "msa.pdf", pages=12, seed=3)
    paper = make_paper_markdown(tmp_path / "paper.md")
    manual = make_manual_docx(tmp_path / "manual.docx")
    slides = make_slides_pptx(tmp_path / "review.pptx")
    workbook = make_workbook_xlsx(tmp_path / "fees.xlsx")
    truths = [contract, paper, manual, slides, workbook]

    results = [intake_file(engagement, t.path, filename=t.path.name, doc_type="demo") for t in truths]
    assert all(r.created for r in results)
    assert all(r.document.status == "queued" and r.document.stages.count() == 4 for r in results)
    docs = dict(
        zip(
            ["pdf", "markdown", "docx", "pptx", "xlsx"],
            wait_terminal([r.document for r in results], worker=celery_worker),
        )
    )
    chunks = {kind: assert_consistent(doc) for kind, doc in docs.items()}
    assert {kind: doc.kind for kind, doc in docs.items()} == {k: k for k in docs}

    # PDF: physical pages, exact; every planted clause lies in a chunk that spans its page.
    assert docs["pdf"].page_count == 12 and not docs["pdf"].pages_estimated
    for clause in contract.clauses:
        holders = chunks_containing(chunks["pdf"], clause.text[:80])
        assert holders, f"planted {clause.clause_type} not found in any chunk"
        assert any(c.page_start <= clause.page <= c.page_end for c in holders), (
            clause.clause_type,
            clause.page,
        )
    # PPTX: slide = page; XLSX: sheet = page; DOCX/Markdown: estimated pages.
    assert docs["pptx"].page_count == slides.count and not docs["pptx"].pages_estimated
    for known in slides.known:
        number = int(known.location.split()[-1])
        assert any(
            c.page_start <= number <= c.page_end for c in chunks_containing(chunks["pptx"], known.text)
        ), known
    assert docs["xlsx"].page_count == len(workbook.headings) and not docs["xlsx"].pages_estimated
    # a DOCX has the pages LibreOffice lays it out on; Markdown has none to lay out: estimated
    assert not docs["docx"].pages_estimated and docs["markdown"].pages_estimated
    assert docs["docx"].page_count == docs["docx"].pages.count() > 1
    for kind, truth in (("markdown", paper), ("docx", manual), ("xlsx", workbook)):
        for known in truth.known:
            assert chunks_containing(chunks[kind], known.text), (kind, known.text)
    # Markdown headings become the section path.
    assert {"Introduction", "Results"} <= {c.section for c in chunks["markdown"]}
    # Stage rows say what happened.
    assert "12 pages" in stage(docs["pdf"], "convert").detail
    assert "embedded" in stage(docs["pdf"], "embed").detail


def _norm(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", " ", text.lower()).strip()


@pytest.mark.corpus
def test_real_cuad_contracts_end_to_end(celery_worker, engagement, cuad_dir):
    listed = [
        json.loads(line) for line in (cuad_dir / "documents.jsonl").read_text().splitlines() if line.strip()
    ]
    listed.sort(key=lambda d: (d["pages"], d["doc"]))
    chosen = [d for d in listed if d["pages"] >= 2][:2] + [next(d for d in listed if d["pages"] >= 6)]
    results = [intake_file(engagement, cuad_dir / d["pdf"], filename=f"{d['doc']}.pdf") for d in chosen]
    docs = wait_terminal([r.document for r in results], timeout=240, worker=celery_worker)

    gold = [json.loads(line) for line in (cuad_dir / "gold.jsonl").read_text().splitlines() if line.strip()]
    found = on_page = with_page = parts = 0
    for meta, doc in zip(chosen, docs):
        chunks = assert_consistent(doc)
        assert doc.page_count == meta["pages"] and doc.kind == "pdf" and not doc.pages_estimated
        normalised = [(_norm(c.text), c) for c in chunks]
        for row in gold:
            if row["doc"] != meta["doc"] or not row["present"]:
                continue
            for span in row["spans"]:
                for part in span["parts"]:
                    needle = _norm(part["text"])
                    if len(needle) < 12:
                        continue
                    parts += 1
                    holders = [c for text, c in normalised if needle in text]
                    found += bool(holders)
                    if holders and part["pages"]:
                        with_page += 1
                        first, last = part["pages"]
                        on_page += any(c.page_start <= first and last <= c.page_end for c in holders) or any(
                            c.page_start <= first <= c.page_end for c in holders
                        )
    assert parts >= 10
    assert found / parts >= 0.95, f"coverage {found}/{parts}"
    assert with_page and on_page / with_page >= 0.95, f"page accuracy {on_page}/{with_page}"


def test_same_bytes_are_one_document_and_queue_nothing(celery_worker, engagement, tmp_path):
    from engagements.models import Engagement

    truth = make_paper_markdown(tmp_path / "paper.md")
    first = intake_file(engagement, truth.path, filename="paper.md")
    wait_terminal([first.document], worker=celery_worker)
    queued = TaskState.objects.filter(name="ingest.convert").count()

    again = intake_file(engagement, truth.path, filename="renamed-copy.md")
    assert not again.created and again.document.pk == first.document.pk
    assert Document.objects.filter(engagement=engagement).count() == 1
    assert TaskState.objects.filter(name="ingest.convert").count() == queued  # nothing queued
    # Another engagement is another client: its own document.
    other = intake_file(Engagement.objects.create(name="Other client"), truth.path, filename="paper.md")
    assert other.created and other.document.pk != first.document.pk
    wait_terminal([other.document], worker=celery_worker)


def test_changed_version_re_embeds_only_changed_chunks(celery_worker, engagement, tmp_path):
    sections = [
        f"# Section {n}\n\n"
        + " ".join(
            f"Clause {n}.{k}: the Supplier shall deliver item {n}-{k} within {n + k} days of the order date."
            for k in range(8)
        )
        for n in range(1, 9)
    ]
    path = tmp_path / "terms.md"
    path.write_text("\n\n".join(sections), encoding="utf-8")
    first = intake_file(engagement, path, filename="terms.md").document
    (first,) = wait_terminal([first], worker=celery_worker)
    before = {c.chunk_id: c.pk for c in assert_consistent(first)}
    cached = EmbeddingCache.objects.count()
    assert "0 from cache" in stage(first, "embed").detail

    sections[4] = sections[4].replace("item 5-3 within 8 days", "item 5-3 within 11 business days")
    path.write_text("\n\n".join(sections), encoding="utf-8")
    result = intake_file(engagement, path, filename="terms.md", replace=True)
    assert result.replaced and result.document.pk == first.pk
    (second,) = wait_terminal([result.document], worker=celery_worker)
    after = {c.chunk_id: c.pk for c in assert_consistent(second)}
    changed = set(after) - set(before)
    assert 1 <= len(changed) <= 2 < len(after)
    assert EmbeddingCache.objects.count() == cached + len(changed)
    assert stage(second, "embed").detail.startswith(f"{len(changed)} chunks embedded")
    # Unchanged chunks keep their rows (and so any citation pointing at them).
    assert all(after[cid] == before[cid] for cid in set(after) & set(before))
    assert chunks_containing(list(second.chunks.all()), "within 11 business days")

    # Re-processing the same content embeds nothing at all.
    reprocess(second)
    (third,) = wait_terminal([second], worker=celery_worker)
    assert stage(third, "embed").detail.startswith("0 chunks embedded")
    assert {c.chunk_id: c.pk for c in assert_consistent(third)} == after


def test_stages_are_idempotent_when_redelivered(engagement, tmp_path):
    """A redelivered stage (acks_late after a worker died) converges on the same rows."""
    truth = make_slides_pptx(tmp_path / "deck.pptx")
    document = intake_file(engagement, truth.path, filename="deck.pptx", enqueue=False).document
    assert pipeline.run_pipeline(document.pk)
    chunks = list(Chunk.objects.filter(document=document).values_list("pk", "chunk_id", "ordinal"))

    # The worker died in the middle of "chunk" and "embed": both run again from the top.
    DocumentStage.objects.filter(document=document, name__in=["chunk", "embed", "index"]).update(
        status="running"
    )
    Document.objects.filter(pk=document.pk).update(status="chunking")
    for name in ("chunk", "embed", "index"):
        assert pipeline.run_stage(document.pk, name)
    document.refresh_from_db()
    assert_consistent(document)
    assert list(Chunk.objects.filter(document=document).values_list("pk", "chunk_id", "ordinal")) == chunks
    # A stage already done is skipped; a stage out of order does nothing.
    assert pipeline.run_stage(document.pk, "chunk")
    assert Chunk.objects.filter(document=document).count() == len(chunks)


def test_a_stage_delivered_again_while_its_first_delivery_still_runs_leaves_the_document_ready(
    engagement, tmp_path, monkeypatch
):
    """A message redelivered while its first worker still runs it (a visibility timeout shorter than
    the stage, or two chains of one document after a retry): the second delivery ran the stage too, and
    its chain went on to "ready"; then the first finished and set the document back to "converting"
    for ever (every stage done, so nothing ran again), having replaced its pages under the index."""
    import threading

    from django.db import connection

    truth = make_paper_markdown(tmp_path / "paper.md")
    document = intake_file(engagement, truth.path, filename="paper.md", enqueue=False).document
    in_convert, release = threading.Event(), threading.Event()
    real_convert = pipeline.convert_file

    def convert_file(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():  # the first delivery: slow
            in_convert.set()
            release.wait(20)
        return real_convert(*args, **kwargs)

    monkeypatch.setattr(pipeline, "convert_file", convert_file)
    outcome = []

    def first_delivery():
        try:
            outcome.append(pipeline.run_pipeline(document.pk))
        finally:
            connection.close()

    first = threading.Thread(target=first_delivery)
    first.start()
    try:
        assert in_convert.wait(20)
        pipeline.run_pipeline(document.pk)  # the second delivery, and its chain
    finally:
        release.set()
        first.join(30)
    document.refresh_from_db()
    assert (document.status, document.progress) == ("ready", 100), (document.status, document.error)
    assert outcome == [True]
    assert_consistent(document)  # its pages and chunks once each
    assert stage(document, "convert").attempts == 2  # both deliveries converted it


def test_two_deliveries_of_convert_writing_pages_at_once_both_succeed(engagement, tmp_path, monkeypatch):
    """Both deliveries convert at the same moment, then write the pages: the second must not fail the
    document on the one-row-per-page rule (it waits for the first and replaces its pages)."""
    import threading

    truth = make_paper_markdown(tmp_path / "paper.md")
    document = intake_file(engagement, truth.path, filename="paper.md", enqueue=False).document
    both_converted = threading.Barrier(2, timeout=20)
    real_convert = pipeline.convert_file

    def convert_file(*args, **kwargs):
        converted = real_convert(*args, **kwargs)
        both_converted.wait()
        return converted

    monkeypatch.setattr(pipeline, "convert_file", convert_file)
    outcome, errors = twice_at_once(lambda: pipeline.run_stage(document.pk, "convert"))
    assert errors == [] and outcome == [True, True]
    monkeypatch.undo()
    assert pipeline.run_pipeline(document.pk)
    document.refresh_from_db()
    assert_consistent(document)


def test_a_stage_that_keeps_killing_its_worker_is_given_up(engagement, tmp_path):
    truth = make_paper_markdown(tmp_path / "paper.md")
    document = intake_file(engagement, truth.path, filename="paper.md", enqueue=False).document
    DocumentStage.objects.filter(document=document, name="convert").update(
        status="running", attempts=pipeline.MAX_ATTEMPTS
    )
    assert not pipeline.run_stage(document.pk, "convert")
    document.refresh_from_db()
    assert document.status == "failed" and document.error_code == "worker_lost"
    assert "interrupted" in document.error


def test_a_stage_stopped_by_the_time_limit_says_so_and_is_tried_again_on_upload(
    engagement, tmp_path, monkeypatch
):
    from celery.exceptions import SoftTimeLimitExceeded

    truth = make_paper_markdown(tmp_path / "paper.md")
    document = intake_file(engagement, truth.path, filename="paper.md", enqueue=False).document

    def too_slow(document, report):
        raise SoftTimeLimitExceeded()

    monkeypatch.setitem(pipeline.STAGE_FUNCTIONS, "convert", too_slow)
    assert not pipeline.run_stage(document.pk, "convert")  # the task ends; its row says why
    document.refresh_from_db()
    assert document.status == "failed" and document.error_code == "timed_out"
    assert "time limit" in document.error and "SoftTimeLimitExceeded" not in document.error
    monkeypatch.undo()
    again = intake_file(
        engagement, truth.path, filename="paper.md", enqueue=False
    )  # our limit, not the file's fault
    assert again.retried and again.document.pk == document.pk
    assert pipeline.run_pipeline(document.pk)


def test_an_unexpected_error_in_a_stage_says_so_and_is_tried_again_on_upload(
    engagement, tmp_path, monkeypatch
):
    truth = make_paper_markdown(tmp_path / "paper.md")
    document = intake_file(engagement, truth.path, filename="paper.md", enqueue=False).document

    def broken(document, report):
        report(40)
        raise RuntimeError("the embedding service went away")

    monkeypatch.setitem(pipeline.STAGE_FUNCTIONS, "embed", broken)
    with pytest.raises(RuntimeError):  # re-raised: the task is recorded failed, its chain stops
        pipeline.run_pipeline(document.pk)
    document.refresh_from_db()
    assert (document.status, document.error_code) == ("failed", "internal")
    assert "embed stage (RuntimeError: the embedding service went away)" in document.error
    assert stage(document, "embed").status == "failed"
    assert not document.chunks.exists() and not document.pages.exists()  # nothing half-indexed stays
    monkeypatch.undo()
    again = intake_file(engagement, truth.path, filename="paper.md", enqueue=False)
    assert again.retried and again.document.pk == document.pk
    assert pipeline.run_pipeline(document.pk)
    document.refresh_from_db()
    assert_consistent(document)
    assert {s.attempts for s in document.stages.all()} == {1}  # the retry started every stage afresh


def test_a_stage_killed_at_the_hard_time_limit_says_so_and_is_tried_again_on_upload(engagement, tmp_path):
    """What the worker does when a stage is killed at the hard limit (its process gone, its message
    acknowledged, never to come back): it calls the task's on_failure with TimeLimitExceeded. The
    document showed "embedding" for ever; now it fails in words, and an upload retries it."""
    from celery.exceptions import TimeLimitExceeded

    from ingest import tasks

    truth = make_paper_markdown(tmp_path / "paper.md")
    document = intake_file(engagement, truth.path, filename="paper.md", enqueue=False).document
    assert pipeline.run_stage(document.pk, "convert") and pipeline.run_stage(document.pk, "chunk")
    DocumentStage.objects.filter(document=document, name="embed").update(status="running", attempts=1)
    Document.objects.filter(pk=document.pk).update(status="embedding")
    tasks.embed_document.on_failure(TimeLimitExceeded(3600), "task-id", (document.pk,), {}, None)
    document.refresh_from_db()
    assert (document.status, document.error_code) == ("failed", "timed_out")
    assert "embed stage ran past its time limit (1 h)" in document.error
    assert stage(document, "embed").status == "failed" and not document.chunks.exists()
    again = intake_file(engagement, truth.path, filename="paper.md", enqueue=False)
    assert again.retried and again.document.pk == document.pk
    assert pipeline.run_pipeline(document.pk)
    document.refresh_from_db()
    assert_consistent(document)


def test_a_document_whose_stage_nothing_will_finish_is_failed_and_retried_on_upload(engagement, tmp_path):
    """A lost broker message, or a next stage never sent: the row said "embedding" for ever and neither an
    upload nor a replace could retry it. The beat's sweep fails it once the hard time limit and a redelivery
    have both passed; a document still changing, or still queued, is left alone."""
    from datetime import timedelta

    from django.utils import timezone

    from config.celery import lost_after_s
    from ingest import tasks

    def upload(name: str):
        path = tmp_path / f"{name}.md"
        path.write_text(f"# {name}\n\nThe {name} agreement is governed by the laws of Delaware.\n")
        return path, intake_file(engagement, path, filename=path.name, enqueue=False).document

    long_ago = timezone.now() - timedelta(seconds=lost_after_s() + 60)
    lost_path, lost = upload("lost")  # its embed message was lost
    assert pipeline.run_stage(lost.pk, "convert") and pipeline.run_stage(lost.pk, "chunk")
    DocumentStage.objects.filter(document=lost, name="embed").update(status="running", attempts=1)
    Document.objects.filter(pk=lost.pk).update(status="embedding", updated_at=long_ago)
    _, unsent = upload("unsent")  # chunked, but its embed stage was never sent
    assert pipeline.run_stage(unsent.pk, "convert") and pipeline.run_stage(unsent.pk, "chunk")
    Document.objects.filter(pk=unsent.pk).update(updated_at=long_ago)
    _, busy = upload("busy")  # still converting, within the limits
    DocumentStage.objects.filter(document=busy, name="convert").update(status="running", attempts=1)
    Document.objects.filter(pk=busy.pk).update(status="converting")
    _, waiting = upload("waiting")  # queued behind a large batch
    Document.objects.filter(pk=waiting.pk).update(updated_at=long_ago)

    assert tasks.fail_stalled_documents() == "2 stalled"
    states = {
        d.original_name: (d.status, d.error_code) for d in Document.objects.filter(engagement=engagement)
    }
    assert states == {
        "lost.md": ("failed", "worker_lost"),
        "unsent.md": ("failed", "worker_lost"),
        "busy.md": ("converting", ""),
        "waiting.md": ("queued", ""),
    }
    lost.refresh_from_db()
    assert "embed stage never finished" in lost.error and not lost.chunks.exists()
    assert stage(unsent, "embed").status == "failed"
    again = intake_file(engagement, lost_path, filename="lost.md", enqueue=False)
    assert again.retried and again.document.pk == lost.pk
    assert pipeline.run_pipeline(lost.pk)
    lost.refresh_from_db()
    assert_consistent(lost)


@pytest.mark.parametrize("kind", ["docx", "xlsx"])
def test_a_time_limit_reached_inside_a_converter_is_a_time_limit_not_a_damaged_file(
    engagement, tmp_path, monkeypatch, kind
):
    """The soft limit lands wherever the worker is, most often inside a converting library, which
    converters wrap in "damaged": the document must say the time limit stopped it, and be retried on upload."""
    import openpyxl
    from celery.exceptions import SoftTimeLimitExceeded

    from ingest import office_converters

    make = {"docx": make_manual_docx, "xlsx": make_workbook_xlsx}[kind]
    truth = make(tmp_path / f"file.{kind}")
    document = intake_file(engagement, truth.path, filename=f"file.{kind}", enqueue=False).document

    def too_slow(*args, **kwargs):
        raise SoftTimeLimitExceeded()

    if kind == "docx":
        monkeypatch.setattr(office_converters.DocxTablesConverter, "convert", too_slow)
    else:
        monkeypatch.setattr(openpyxl, "load_workbook", too_slow)
    assert not pipeline.run_stage(document.pk, "convert")
    document.refresh_from_db()
    assert (document.status, document.error_code) == ("failed", "timed_out"), document.error
    assert "time limit" in document.error and "damaged" not in document.error
    monkeypatch.undo()
    again = intake_file(engagement, truth.path, filename=f"file.{kind}", enqueue=False)
    assert again.retried and again.document.pk == document.pk
    assert pipeline.run_pipeline(document.pk)


def test_text_past_the_model_window_is_embedded_not_dropped():
    """all-MiniLM-L6-v2 reads 256 word pieces; longer text is averaged over windows."""
    import numpy as np

    from ingest.embeddings import WINDOW_TOKENS, get_embedder

    embedder = get_embedder()
    head = "The Supplier shall deliver the goods to the Customer's warehouse in Chicago. " * 20
    tail = "Governing law: this agreement is governed by the laws of the State of Delaware. " * 20
    pieces, owner, lengths = embedder._windows([head + tail, "short"])
    assert len(pieces) >= 3 and list(owner[-1:]) == [1] and max(lengths) <= WINDOW_TOKENS
    whole, first_window_only = embedder.encode([head + tail, head])
    assert np.isclose(np.linalg.norm(whole), 1.0, atol=1e-5)
    law = embedder.encode(["Which state's law governs the agreement?"])[0]
    assert float(whole @ law) > float(first_window_only @ law) + 0.05  # the tail counts


def test_a_document_uploaded_without_a_type_takes_the_one_its_title_names(
    celery_worker, engagement, tmp_path
):
    body = (
        "# EXCLUSIVE DISTRIBUTOR AGREEMENT\n\nThis Exclusive Distributor Agreement is made between Acme Corp. "
        "and Beta Ltd. Distributor shall buy the Products from Acme at the prices in Schedule 1.\n"
    )
    untyped, typed = tmp_path / "untyped.md", tmp_path / "typed.md"
    untyped.write_text(body)
    typed.write_text(body.replace("Acme", "Gamma"))
    docs = wait_terminal(
        [
            intake_file(engagement, untyped, filename=untyped.name).document,
            intake_file(engagement, typed, filename=typed.name, doc_type="Supply").document,
        ],
        worker=celery_worker,
    )
    assert [d.status for d in docs] == ["ready", "ready"]
    assert (docs[0].doc_type, docs[0].doc_type_source) == ("Distributor", "title")
    assert "type Distributor, read from its title" in stage(docs[0], "convert").detail
    assert (docs[1].doc_type, docs[1].doc_type_source) == ("Supply", "upload")  # the admin's type is kept

    # a new version of the untyped file is typed by its own title, not by the old file's
    untyped.write_text(
        body.replace("DISTRIBUTOR AGREEMENT", "RESELLER AGREEMENT").replace("Distributor", "Reseller")
    )
    again = intake_file(engagement, untyped, filename=untyped.name, replace=True)
    assert again.replaced and again.document.pk == docs[0].pk
    [replaced] = wait_terminal([again.document], worker=celery_worker)
    assert (replaced.doc_type, replaced.doc_type_source) == ("Reseller", "title")


def test_replace_keeps_a_version_that_reviews_refer_to(celery_worker, engagement, tmp_path, make_member):
    """Citations hold offsets into a document's text: a changed file never rewrites a document that
    clauses, reviews or summaries refer to, and a document still being processed is not replaced."""
    from reviewer.models import DocumentTypeChange

    path = tmp_path / "terms.md"
    path.write_text("# Terms\n\nThe Supplier shall deliver within 8 days.\n", encoding="utf-8")
    first = intake_file(engagement, path, filename="terms.md").document
    (first,) = wait_terminal([first], worker=celery_worker)
    DocumentTypeChange.objects.create(
        document=first, old_type="", new_type="Supply", changed_by=make_member(engagement, "admin")
    )

    path.write_text("# Terms\n\nThe Supplier shall deliver within 11 days.\n", encoding="utf-8")
    result = intake_file(engagement, path, filename="terms.md", replace=True)
    assert result.created and not result.replaced and result.kept.pk == first.pk
    first.refresh_from_db()
    assert "within 8 days" in first.text and first.sha256 != result.document.sha256
    (second,) = wait_terminal([result.document], worker=celery_worker)
    assert "within 11 days" in second.text

    busy = Document.objects.filter(pk=second.pk)
    busy.update(status=Document.Status.EMBEDDING)
    path.write_text("# Terms\n\nThe Supplier shall deliver within 12 days.\n", encoding="utf-8")
    with pytest.raises(IntakeError) as refused:
        intake_file(engagement, path, filename="terms.md", replace=True)
    assert refused.value.code == "busy" and "still being processed" in refused.value.message


@pytest.mark.parametrize("name", pipeline.STAGES)
def test_a_document_deleted_while_a_stage_runs_ends_the_stage_quietly(
    engagement, tmp_path, monkeypatch, name
):
    """An admin deletes a document while a worker is on it: the stage stops there (no traceback, no task
    recorded failed, no row written back for the deleted document), and the rest of its chain does nothing."""
    truth = make_paper_markdown(tmp_path / "paper.md")
    document = intake_file(engagement, truth.path, filename="paper.md", enqueue=False).document
    for earlier in pipeline.STAGES[: pipeline.STAGES.index(name)]:
        assert pipeline.run_stage(document.pk, earlier)
    real = pipeline.STAGE_FUNCTIONS[name]

    def deleted_meanwhile(doc, report):
        Document.objects.filter(pk=doc.pk).delete()  # the admin's delete commits while the stage works
        return real(doc, report)

    monkeypatch.setitem(pipeline.STAGE_FUNCTIONS, name, deleted_meanwhile)
    assert not pipeline.run_stage(document.pk, name)
    assert not Document.objects.filter(pk=document.pk).exists()
    assert not Chunk.objects.filter(document_id=document.pk).exists()
    assert not DocumentStage.objects.filter(document_id=document.pk).exists()
    monkeypatch.undo()
    assert not any(
        pipeline.run_stage(document.pk, later) for later in pipeline.STAGES[pipeline.STAGES.index(name) :]
    )


def test_an_uploaded_contract_is_not_readable_by_other_accounts_on_the_host(engagement, tmp_path, settings):
    settings.MEDIA_ROOT = str(tmp_path / "media")  # a fresh media folder: every directory below it is new
    source = tmp_path / "terms.md"
    source.write_text("# Terms\n\nThe Supplier shall deliver within 8 days.\n", encoding="utf-8")
    stored = Path(intake_file(engagement, source, filename="terms.md", enqueue=False).document.file.path)
    assert stored.is_relative_to(tmp_path / "media")
    assert stored.stat().st_mode & 0o777 == 0o640
    for folder in stored.relative_to(tmp_path / "media").parents[:-1]:  # documents/, documents/YYYY/, …/MM/
        assert (tmp_path / "media" / folder).stat().st_mode & 0o777 == 0o750, folder


def test_a_deleted_document_leaves_no_file_behind(engagement, tmp_path):
    """Deleting a document (or its whole engagement) removes its uploaded file from MEDIA_ROOT once the
    deletion commits; a deletion rolled back keeps it."""
    from django.db import transaction

    first = make_paper_markdown(tmp_path / "paper.md")
    second = tmp_path / "terms.md"
    second.write_text("# Terms\n\nThe Supplier shall deliver within 8 days.\n", encoding="utf-8")
    kept = intake_file(engagement, first.path, filename="paper.md", enqueue=False).document
    other = intake_file(engagement, second, filename="terms.md", enqueue=False).document
    paths = [Path(kept.file.path), Path(other.file.path)]
    assert all(p.is_file() for p in paths)

    with pytest.raises(RuntimeError), transaction.atomic():
        Document.objects.filter(pk=kept.pk).delete()
        raise RuntimeError("the deletion is rolled back")
    assert paths[0].is_file()

    kept.delete()
    assert not paths[0].exists() and paths[1].is_file()
    engagement.delete()
    assert not paths[1].exists()


def test_a_deleted_document_whose_file_name_lies_outside_media_is_deleted_and_its_file_left(
    engagement, tmp_path
):
    # a name the storage refuses to touch (SuspiciousFileOperation) must not fail the deletion after its commit
    outside = tmp_path / "elsewhere.pdf"
    outside.write_bytes(b"%PDF-1.4 kept")
    document = intake_file(
        engagement, make_paper_markdown(tmp_path / "paper.md").path, filename="paper.md", enqueue=False
    ).document
    Document.objects.filter(pk=document.pk).update(file=f"../../{outside.name}")
    Document.objects.get(pk=document.pk).delete()
    assert not Document.objects.filter(pk=document.pk).exists() and outside.read_bytes() == b"%PDF-1.4 kept"


def test_two_uploads_at_once_of_bytes_that_failed_on_our_side_process_them_once(
    engagement, tmp_path, monkeypatch
):
    """Both uploads are answered; only one of them queues the document's pipeline again (two pipelines
    on one document wrote its pages twice over, and a second extraction run after them)."""
    import threading

    from ingest import intake

    truth = make_paper_markdown(tmp_path / "paper.md")
    document = intake_file(engagement, truth.path, filename="paper.md", enqueue=False).document
    Document.objects.filter(pk=document.pk).update(status="failed", error_code="worker_lost")
    queued = []
    monkeypatch.setattr(
        intake, "enqueue_on_commit", lambda document_id, then=None: queued.append(document_id)
    )
    both_found_it_failed = threading.Barrier(2, timeout=3)
    real_reprocess = intake.reprocess

    def reprocess(*args, **kwargs):
        try:
            both_found_it_failed.wait()
        except threading.BrokenBarrierError:  # the other one is already through: go on alone
            pass
        return real_reprocess(*args, **kwargs)

    monkeypatch.setattr(intake, "reprocess", reprocess)
    results, errors = twice_at_once(lambda: intake_file(engagement, truth.path, filename="paper.md"))
    assert errors == [] and len(results) == 2
    assert {r.document.pk for r in results} == {document.pk} and not any(r.created for r in results)
    assert queued == [document.pk]
    assert sorted(r.retried for r in results) == [False, True]
    document.refresh_from_db()
    assert document.status == "queued" and not document.error_code
