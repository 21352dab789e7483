"""``manage.py ingest`` and ``manage.py bulk_ingest``: waiting on a real worker or in process,
the chunk dump format, and a bulk run that carries on past bad files."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from demo import make_contract_pdf, make_paper_markdown, make_slides_pptx
from ingest.models import Document
from tests.integration.ingest_helpers import corrupt_pdf

pytestmark = pytest.mark.django_db(transaction=True)
DUMP_KEYS = [
    "doc",
    "chunk_id",
    "ordinal",
    "page_start",
    "page_end",
    "char_start",
    "char_end",
    "paragraph",
    "section",
    "text",
]


def test_ingest_waits_for_the_worker_and_dumps_chunks(celery_worker, tmp_path):
    contract = make_contract_pdf(tmp_path / "Master Agreement.pdf", pages=12, seed=4)
    deck = make_slides_pptx(tmp_path / "deck.pptx")
    dump = tmp_path / "chunks.jsonl"
    out = io.StringIO()
    call_command(
        "ingest",
        str(contract.path),
        str(deck.path),
        "--engagement",
        "Cmd client",
        "--doc-type",
        "MSA",
        "--wait",
        "--dump-chunks",
        str(dump),
        stdout=out,
    )
    printed = out.getvalue()
    assert "created engagement" in printed and "queued as document" in printed
    assert "Master Agreement.pdf: ready · 12 pages" in printed and "deck.pptx: ready" in printed

    lines = [json.loads(line) for line in dump.read_text(encoding="utf-8").splitlines()]
    documents = {d.original_name: d for d in Document.objects.all()}
    assert {d.doc_type for d in documents.values()} == {"MSA"}
    assert len(lines) == sum(d.chunks.count() for d in documents.values())
    assert {line["doc"] for line in lines} == {"Master Agreement", "deck"}
    for line in lines:
        assert list(line) == DUMP_KEYS
        document = documents["Master Agreement.pdf" if line["doc"] == "Master Agreement" else "deck.pptx"]
        assert document.text[line["char_start"] : line["char_end"]] == line["text"]

    # The same bytes again: nothing new, nothing queued.
    out = io.StringIO()
    call_command("ingest", str(deck.path), "--engagement", "Cmd client", stdout=out)
    assert "same bytes as document" in out.getvalue() and Document.objects.count() == 2


def test_bulk_ingest_goes_on_past_bad_files_and_sums_up(tmp_path):
    folder = tmp_path / "inbox"
    (folder / "sub").mkdir(parents=True)
    make_paper_markdown(folder / "paper.md")
    make_slides_pptx(folder / "sub" / "deck.pptx")
    corrupt_pdf(folder / "broken.pdf")
    (folder / "empty.txt").write_bytes(b"")
    (folder / "notes.xyz").write_text("not a document type")  # skipped: not a document extension
    (folder / ".hidden.md").write_text("# hidden")

    out = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("bulk_ingest", str(folder), "--engagement", "Bulk", "--wait", "--inline", stdout=out)
    assert exited.value.code == 1  # something failed: the exit status says so
    printed = out.getvalue()
    assert "[1/4]" in printed and "[4/4]" in printed
    assert "empty.txt: refused (empty)" in printed
    assert "4 files" in printed and "3 new, 0 duplicates, 1 refused" in printed
    assert "1 failed" in printed and "2 ready" in printed
    statuses = {d.original_name: d.status for d in Document.objects.all()}
    assert statuses == {"paper.md": "ready", "deck.pptx": "ready", "broken.pdf": "failed"}


@pytest.mark.parametrize("command", ["ingest", "bulk_ingest"])
def test_inline_runs_a_document_that_failed_on_our_side_again(tmp_path, command):
    # the re-upload resets it to queued (intake retries internal/worker_lost failures), but --inline
    # ran only new documents: it stayed queued for a worker nobody had asked for
    folder = tmp_path / "inbox"
    folder.mkdir()
    paper = make_paper_markdown(folder / "paper.md").path
    target = str(paper) if command == "ingest" else str(folder)
    call_command(command, target, "--engagement", "Retry", "--wait", "--inline", stdout=io.StringIO())
    Document.objects.update(status=Document.Status.FAILED, error_code="internal", error="crashed")

    out = io.StringIO()
    call_command(command, target, "--engagement", "Retry", "--wait", "--inline", stdout=out)
    document = Document.objects.get()
    assert document.status == Document.Status.READY and document.error_code == ""
    assert "retried" in out.getvalue() and "paper.md: ready ·" in out.getvalue()
