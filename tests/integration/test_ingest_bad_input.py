"""Bad input never breaks anything else: each bad file is refused at the door or ends as a
failed document with a clear message, leaves no pages or chunks, and the worker, and the good
documents queued beside it, carry on."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from config.celery import app
from demo import make_manual_docx, make_paper_markdown
from ingest.intake import IntakeError, intake_file
from ingest.models import Document
from taskstate.models import TaskState
from tests.integration.ingest_helpers import (
    assert_consistent,
    corrupt_pdf,
    encrypted_pdf,
    scanned_pdf,
    stage,
    wait_terminal,
    zip_bomb,
)
from tests.scan_pdf import image_pdf, page_image

pytestmark = pytest.mark.django_db(transaction=True)


def blank_scan(path: Path) -> Path:
    path.write_bytes(image_pdf([page_image([])[0]]))
    return path


SCRIPTED_HTML = """<!doctype html><html><head><title>Notice</title>
<script>fetch('/steal?c=' + document.cookie)</script><style>body{display:none}</style></head>
<body onload="alert('owned')"><h1>Termination Notice</h1>
<p>The Supplier may terminate this Agreement on <b>thirty (30) days</b> written notice.</p>
<p><a href="javascript:alert(1)">Click</a> <img src=x onerror="alert(2)"></p>
<script type="text/javascript">document.write('<p>injected</p>')</script></body></html>"""


def test_bad_files_fail_cleanly_and_good_ones_beside_them_succeed(celery_worker, engagement, tmp_path):
    cases = {
        "corrupt.pdf": (corrupt_pdf(tmp_path / "corrupt.pdf"), "failed", "corrupt"),
        "locked.pdf": (encrypted_pdf(tmp_path / "locked.pdf"), "failed", "encrypted"),
        "blank-scan.pdf": (blank_scan(tmp_path / "blank-scan.pdf"), "failed", "empty"),  # OCR reads nothing
        "bomb.docx": (zip_bomb(tmp_path / "bomb.docx", "docx"), "failed", "zip_bomb"),
        "bomb.xlsx": (zip_bomb(tmp_path / "bomb.xlsx", "xlsx"), "failed", "zip_bomb"),
    }
    latin = tmp_path / "latin.txt"
    latin.write_bytes(
        "Fee schedule: caf\u00e9 service at \u20ac100 per month \u2014 payable on receipt.\n".encode("cp1252")
        * 20
    )
    html = tmp_path / "notice.html"
    html.write_text(SCRIPTED_HTML, encoding="utf-8")
    good = make_paper_markdown(tmp_path / "paper.md").path
    scan = scanned_pdf(tmp_path / "scan.pdf")  # read by OCR (ingest.ocr)

    bad = {
        name: intake_file(engagement, path, filename=name).document for name, (path, _, _) in cases.items()
    }
    fine = {p.name: intake_file(engagement, p, filename=p.name).document for p in (latin, html, good, scan)}
    rows = wait_terminal([*bad.values(), *fine.values()], timeout=180, worker=celery_worker)
    by_name = {row.original_name: row for row in rows}

    for name, (_, status, code) in cases.items():
        doc = by_name[name]
        assert (doc.status, doc.error_code) == (status, code), (name, doc.status, doc.error_code, doc.error)
        assert len(doc.error) > 20 and doc.error.endswith("."), doc.error  # a sentence for people
        assert not doc.chunks.exists() and not doc.pages.exists() and doc.text == ""
        convert = stage(doc, "convert")
        assert convert.status == "failed" and convert.detail == doc.error[:300]
        assert all(s.status == "pending" for s in doc.stages.exclude(name="convert"))
    assert "password" in by_name["locked.pdf"].error and "no text" in by_name["blank-scan.pdf"].error
    scanned = by_name["scan.pdf"]
    assert "The Supplier shall deliver the goods on time." in scanned.text and scanned.status == "ready"
    assert scanned.pages.filter(ocr_confidence__gt=0).count() == 2

    # Non-UTF-8 text is decoded (cp1252 here), not rejected and not mangled.
    latin_doc = by_name["latin.txt"]
    assert "caf\u00e9 service at \u20ac100" in " ".join(c.text for c in assert_consistent(latin_doc))
    # HTML: the words are kept as text; nothing executable survives in text or chunks.
    html_doc = by_name["notice.html"]
    stored = html_doc.text + "".join(c.text for c in assert_consistent(html_doc))
    assert "thirty (30) days" in stored
    for risky in ("<script", "document.cookie", "onload", "onerror", "javascript:", "injected"):
        assert risky not in stored, risky
    assert_consistent(by_name["paper.md"])

    # The worker survived every file, and the failures were handled (tasks succeeded).
    assert celery_worker.proc.poll() is None
    assert any(celery_worker.name in key for reply in app.control.ping(timeout=1) for key in reply)
    assert not TaskState.objects.filter(name__startswith="ingest.", state="failure").exists()


def test_files_refused_at_the_door_leave_nothing_behind(engagement, tmp_path, settings):
    docx = make_manual_docx(tmp_path / "manual.docx").path
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    lying_pdf = tmp_path / "contract.pdf"  # a Word file named .pdf
    lying_pdf.write_bytes(docx.read_bytes())
    lying_docx = tmp_path / "scan.docx"  # a PDF named .docx
    lying_docx.write_bytes(b"%PDF-1.4\n" + b"0" * 2000)
    program = tmp_path / "setup.exe"
    program.write_bytes(b"MZ\x90\x00" + bytes(range(256)) * 8)
    big = tmp_path / "big.txt"
    big.write_text("word " * 400, encoding="utf-8")

    expected = {
        empty: "empty",
        lying_pdf: "type_mismatch",
        lying_docx: "type_mismatch",
        program: "unsupported",
        big: "too_large",
    }
    queued = TaskState.objects.count()
    stored = Path(settings.MEDIA_ROOT)
    files_before = {p for p in stored.rglob("*") if p.is_file()}
    for path, code in expected.items():
        settings.MAX_UPLOAD_BYTES = 1000 if path is big else 10 * 1024 * 1024
        with pytest.raises(IntakeError) as refused:
            intake_file(engagement, path, filename=path.name)
        assert refused.value.code == code, (path.name, refused.value.code)
        assert path.name in refused.value.message
    settings.MAX_UPLOAD_BYTES = 1000
    assert "“big.txt” is 2.0 KB; the limit is 1000 bytes" in _message(engagement, big)
    settings.MAX_UPLOAD_BYTES = 10 * 1024 * 1024
    assert "Word document" in _message(engagement, lying_pdf)
    assert not Document.objects.exists()
    assert TaskState.objects.count() == queued
    assert {p for p in stored.rglob("*") if p.is_file()} == files_before  # nothing stored

    # An upload (the reviewer UI's path) goes through the same door.
    upload = SimpleUploadedFile("Manual.docx", docx.read_bytes())
    result = intake_file(engagement, upload, filename=upload.name, enqueue=False)
    assert result.created and result.document.kind == "" and result.document.size_bytes == docx.stat().st_size
    assert Path(result.document.file.path).read_bytes() == docx.read_bytes()


def _message(engagement, path) -> str:
    try:
        intake_file(engagement, path, filename=path.name)
    except IntakeError as exc:
        return exc.message
    raise AssertionError(f"{path.name} was accepted")


def test_a_long_non_ascii_file_name_is_stored_under_a_shorter_one(engagement, tmp_path):
    # 104 Chinese characters are 312 bytes: over the file system's 255 per name, saving raised OSError (HTTP 500)
    name = "合同" * 52 + ".txt"
    body = b"The Supplier shall deliver the goods.\n"
    upload = SimpleUploadedFile(name, body)
    result = intake_file(engagement, upload, filename=name, enqueue=False)
    assert result.created and result.document.original_name == name
    stored = Path(result.document.file.path)
    assert stored.read_bytes() == body and stored.suffix == ".txt"
    assert len(stored.name.encode()) <= 255 and stored.name.startswith("合同")


def test_a_file_that_cannot_be_stored_is_refused_with_words(engagement, tmp_path, monkeypatch):
    from django.core.files.storage import FileSystemStorage

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(FileSystemStorage, "_save", full)
    upload = SimpleUploadedFile("lease.txt", b"The Tenant shall pay rent monthly.\n")
    with pytest.raises(IntakeError) as refused:
        intake_file(engagement, upload, filename=upload.name, enqueue=False)
    assert refused.value.code == "storage" and "lease.txt" in refused.value.message
    assert not Document.objects.exists()


def test_an_upload_the_queue_never_took_says_so_and_is_retried_by_uploading_again(
    engagement, tmp_path, monkeypatch, make_member
):
    from django.test import Client
    from kombu.exceptions import OperationalError

    import ingest.tasks

    path = make_paper_markdown(tmp_path / "paper.md").path

    def down(*args, **kwargs):
        raise OperationalError("Error 111 connecting to localhost:6379. Connection refused.")

    monkeypatch.setattr(ingest.tasks, "enqueue_pipeline", down)
    first = intake_file(engagement, path, filename="paper.md")  # committed: the enqueue runs after
    document = Document.objects.get(pk=first.document.pk)
    assert document.status == Document.Status.FAILED and document.error_code == "not_queued"
    assert "could not be reached" in document.error and "Upload the same file again" in document.error
    assert document.file.storage.exists(document.file.name)  # nothing lost

    # the upload page says so at once
    from django.urls import reverse

    client, auditor = Client(), make_member(engagement, "admin")
    client.force_login(auditor)
    upload = make_manual_docx(tmp_path / "manual.docx").path
    said = client.post(
        reverse("engagement-upload", args=[engagement.pk]),
        {"files": [SimpleUploadedFile("manual.docx", upload.read_bytes())]},
    ).content.decode()
    assert "Saved, but not queued" in said and "Upload the same file again" in said

    monkeypatch.undo()
    sent = []
    monkeypatch.setattr(ingest.tasks, "enqueue_pipeline", lambda pk, then=None: sent.append(pk))
    again = intake_file(engagement, path, filename="paper.md")
    assert again.retried and again.document.pk == document.pk and sent == [document.pk]
    assert Document.objects.get(pk=document.pk).status == Document.Status.QUEUED
