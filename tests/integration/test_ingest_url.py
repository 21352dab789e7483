"""A contract from a URL: the document shows "fetching" while a worker fetches it from a real server on
the loopback interface (allowed through URL_FETCH_ALLOWED_HOSTS), then goes through the door of an upload
and the pipeline. Its kind is read from the bytes; it records its URL and when it was fetched. A URL that
is not http(s) is refused at the door; one that times out, leads inside the network, or answers without
end fails its own document with a sentence, nothing stored, the documents beside it unaffected."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from config.celery import app
from demo import make_contract_pdf
from ingest.intake import IntakeError, intake_file
from ingest.models import Document
from ingest.pipeline import run_pipeline
from ingest.url_intake import fetch_document, intake_url
from taskstate.models import TaskState
from tests.fetch_server import FetchServer, endless, redirect, serve, trickle
from tests.integration.ingest_helpers import assert_consistent, wait_terminal
from tests.worker import WorkerProcess

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPTED = b"""<!doctype html><html><head><title>MSA</title><script>fetch('/steal?c=' + document.cookie)</script>
</head><body onload="alert('owned')"><h1>Master Services Agreement</h1>
<p>The Customer shall pay a fee of $247.83 per pallet within thirty (30) days of each invoice.</p>
<p><a href="javascript:alert(1)">Click</a> <img src=x onerror="alert(2)"><iframe src="https://evil.example"></iframe></p>
<script>document.write('<p>injected</p>')</script></body></html>"""
TERMS = b"Payment terms: invoices are payable within 45 days of receipt.\n" * 5


@pytest.fixture
def server(settings):
    running = FetchServer()
    settings.URL_FETCH_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.URL_FETCH_TIMEOUT = 5
    yield running
    running.close()


def stored_files(settings) -> set[Path]:
    return {p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file()}


def test_a_contract_from_a_url_is_fetched_then_processed_like_an_upload(engagement, server):
    server.routes["/deals/msa"] = serve(SCRIPTED)
    url = server.url("/deals/msa?version=3")

    document = intake_url(engagement, url, doc_type="MSA", enqueue=False).document
    assert (document.status, document.source_url, document.sha256, document.fetched_at) == (
        "fetching",
        url,
        "",
        None,
    )
    assert not document.file

    before = timezone.now()
    assert fetch_document(document.pk, enqueue=False)
    document.refresh_from_db()
    assert (document.status, document.original_name, document.title) == ("queued", "msa.html", "msa")
    assert document.source_url == url and before <= document.fetched_at <= timezone.now()
    assert Path(document.file.path).read_bytes() == SCRIPTED and document.size_bytes == len(SCRIPTED)

    assert run_pipeline(document.pk)
    document.refresh_from_db()
    chunks = assert_consistent(document)
    assert document.kind == "html" and document.doc_type == "MSA"
    assert "$247.83 per pallet" in document.text
    stored = document.text + "".join(c.text for c in chunks)
    for risky in ("<script", "document.cookie", "onload", "onerror", "javascript:", "iframe", "injected"):
        assert risky not in stored, risky  # nothing executable is kept (html_body, convert._tidy)
    assert fetch_document(document.pk) is False  # a second delivery of the task does nothing


def test_the_kind_comes_from_the_bytes_not_the_url_or_the_content_type(engagement, server, tmp_path):
    pdf = make_contract_pdf(tmp_path / "x.pdf", pages=12, seed=7).path.read_bytes()
    server.routes["/contract"] = serve(pdf, content_type="text/html")  # a PDF sent as a page
    server.routes["/terms.pdf"] = serve(SCRIPTED, content_type="application/pdf")  # a page sent as a PDF
    server.routes["/notes"] = serve(TERMS, content_type="text/html")  # a page with no <html> at its start
    server.routes["/plain"] = serve(TERMS + b"Late payments bear interest.\n", content_type="text/plain")
    server.routes["/download"] = serve(
        pdf,
        content_type="application/octet-stream",
        Content_Disposition='attachment; filename="Supply 2024.pdf"',
    )
    server.routes["/setup"] = serve(b"MZ\x90\x00" + bytes(range(256)) * 8, content_type="application/pdf")

    names = {}
    for path in ("/contract", "/terms.pdf", "/notes", "/plain", "/download", "/setup"):
        document = intake_url(engagement, server.url(path), enqueue=False).document
        fetch_document(document.pk, enqueue=False)
        document.refresh_from_db()
        names[path] = (
            document.status,
            document.original_name if document.status == "queued" else document.error_code,
        )

    assert names == {
        "/contract": ("queued", "contract.pdf"),
        "/terms.pdf": ("queued", "terms.html"),
        "/notes": ("queued", "notes.html"),
        "/plain": ("queued", "plain.txt"),
        "/download": ("failed", "duplicate"),  # the same PDF as /contract
        "/setup": ("failed", "unsupported"),
    }
    pdf_document = Document.objects.get(original_name="contract.pdf")
    assert run_pipeline(pdf_document.pk)
    pdf_document.refresh_from_db()
    assert (pdf_document.kind, pdf_document.page_count, pdf_document.pages_estimated) == ("pdf", 12, False)
    duplicate = Document.objects.get(source_url=server.url("/download"))
    assert duplicate.error == (
        "The file at this URL is the same as “contract”, already in this engagement; nothing new to process."
    )


def test_bad_urls_each_fail_alone_with_nothing_stored(engagement, server, settings):
    settings.URL_FETCH_TIMEOUT = 1
    settings.URL_FETCH_MAX_BYTES = 1024 * 1024
    server.routes["/good"] = serve(TERMS, content_type="text/plain")
    server.routes["/slow"] = trickle(every_s=0.1)
    server.routes["/inside"] = redirect(server.url("/good", host="localhost"))  # localhost is not allowed
    server.routes["/metadata"] = redirect("http://169.254.169.254/latest/meta-data/")
    server.routes["/file"] = redirect("file:///etc/passwd")
    server.routes["/huge"] = endless(declared=20 * 1024**3)
    server.routes["/stream"] = endless()
    before = stored_files(settings)

    for url in (
        "file:///etc/passwd",
        "ftp://files.example/contract.pdf",
        "javascript:alert(document.cookie)",
    ):
        with pytest.raises(IntakeError) as caught:
            intake_url(engagement, url)
        assert caught.value.code == "url_refused" and "Only http and https" in caught.value.message
    assert not Document.objects.exists()

    expected = {
        "/slow": ("fetch_timeout", "did not deliver the file within 1 seconds"),
        "/inside": ("blocked_address", "localhost resolves to 127.0.0.1, a loopback address"),
        "/metadata": ("blocked_address", "a cloud metadata address"),
        "/file": ("url_refused", "“file:” addresses cannot"),
        "/huge": ("too_large", "announced 20.0 GB; the limit is 1.0 MB"),
        "/stream": ("too_large", "sent more than 1.0 MB"),
        "/missing": ("fetch_failed", "404 Not Found"),
        "/good": ("", ""),
    }
    documents = {path: intake_url(engagement, server.url(path), enqueue=False).document for path in expected}
    for document in documents.values():
        fetch_document(document.pk, enqueue=False)

    for path, (code, said) in expected.items():
        document = Document.objects.get(pk=documents[path].pk)
        if not code:
            assert document.status == "queued" and document.fetched_at is not None
            continue
        assert (document.status, document.error_code) == ("failed", code), (path, document.error)
        assert said in document.error and document.error.endswith("."), document.error
        assert not document.file and document.sha256 == "" and document.fetched_at is None
        assert not document.pages.exists() and not document.chunks.exists() and document.text == ""
    assert len(stored_files(settings) - before) == 1  # the good one's file alone
    assert not any(s.path == "/good" and s.host.startswith("localhost") for s in server.seen)


def test_a_url_that_failed_to_fetch_is_fetched_again_when_submitted_again(engagement, server):
    url = server.url("/msa.html")
    first = intake_url(engagement, url, enqueue=False)
    fetch_document(first.document.pk, enqueue=False)
    first.document.refresh_from_db()
    assert (first.document.status, first.document.error_code) == ("failed", "fetch_failed")

    server.routes["/msa.html"] = serve(SCRIPTED)
    again = intake_url(engagement, url, enqueue=False)
    assert again.document.pk == first.document.pk and again.retried and again.document.status == "fetching"
    assert fetch_document(again.document.pk, enqueue=False)
    assert Document.objects.get().status == "queued"

    same = intake_url(engagement, url, enqueue=False)  # its bytes are in: a new fetch, the same bytes
    fetch_document(same.document.pk, enqueue=False)
    same.document.refresh_from_db()
    assert same.created and (same.document.status, same.document.error_code) == ("failed", "duplicate")


def test_the_same_bytes_as_an_uploaded_file_are_not_a_second_document(engagement, server, tmp_path):
    path = tmp_path / "terms.txt"
    path.write_bytes(TERMS)
    uploaded = intake_file(engagement, path, filename="Payment terms.txt", enqueue=False).document
    server.routes["/terms"] = serve(TERMS, content_type="text/plain")

    fetched = intake_url(engagement, server.url("/terms"), enqueue=False).document
    fetch_document(fetched.pk, enqueue=False)

    fetched.refresh_from_db()
    assert (fetched.status, fetched.error_code) == ("failed", "duplicate")
    assert "“Payment terms”, already in this engagement" in fetched.error
    assert Document.objects.filter(sha256=uploaded.sha256).count() == 1


def test_the_upload_page_takes_urls_and_a_worker_fetches_them(client, engagement, make_member, monkeypatch):
    server = FetchServer()
    server.routes["/deals/msa"] = serve(SCRIPTED)
    queue = f"url-fetch-{os.getpid()}"
    monkeypatch.setitem(app.conf, "task_default_queue", queue)  # only this test's worker takes its messages
    worker = WorkerProcess(
        "url-fetch", env={"CELERY_TASK_DEFAULT_QUEUE": queue, "URL_FETCH_ALLOWED_HOSTS": "127.0.0.1"}
    ).start()
    try:
        client.force_login(make_member(engagement, "admin"))
        urls = [server.url("/deals/msa"), server.url("/deals/msa", host="localhost"), "javascript:alert(1)"]
        response = client.post(
            reverse("engagement-upload", args=[engagement.pk]), {"urls": "\n".join([*urls, "", urls[0]])}
        )

        html = response.content.decode()
        assert response.status_code == 200
        assert html.count("Fetching; processed like an upload once its file is in.") == 2
        assert "“javascript:” addresses cannot" in html
        rows = wait_terminal(
            list(Document.objects.filter(engagement=engagement).order_by("pk")), worker=worker
        )
        ready, blocked = rows
        assert (ready.status, ready.original_name, ready.source_url) == ("ready", "msa.html", urls[0])
        assert ready.fetched_at is not None and "$247.83 per pallet" in ready.text
        assert (blocked.status, blocked.error_code) == ("failed", "blocked_address")
        assert "localhost resolves to 127.0.0.1" in blocked.error
        assert TaskState.objects.filter(name="ingest.fetch", state="success").count() == 2
        page = client.get(reverse("engagement", args=[engagement.pk])).content.decode()
        assert f'href="{urls[0]}"' in page and "fetched " in page
    finally:
        worker.stop()
        server.close()


def test_the_upload_form_asks_for_a_file_or_a_url(client, engagement, make_member, settings):
    client.force_login(make_member(engagement, "admin"))
    url = reverse("engagement-upload", args=[engagement.pk])
    response = client.post(url, {"urls": "  \n"})
    assert (
        response.status_code == 422
        and "Choose at least one file or paste a URL." in response.content.decode()
    )
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 2
    response = client.post(url, {"urls": "https://a.example/1\nhttps://a.example/2\nhttps://a.example/3"})
    assert (
        response.status_code == 422 and "At most 2 URLs at once (these are 3)." in response.content.decode()
    )
    assert not Document.objects.exists()
    assert 'id="upload-urls-help"' in client.get(url).content.decode()


def test_the_ingest_command_fetches_a_url(engagement, server):
    server.routes["/msa"] = serve(SCRIPTED)
    out, err = io.StringIO(), io.StringIO()

    with pytest.raises(SystemExit):  # a URL was refused: exit status 1
        call_command(
            "ingest",
            server.url("/msa"),
            "javascript:alert(1)",
            "--engagement",
            engagement.name,
            "--inline",
            "--wait",
            stdout=out,
            stderr=err,
        )

    document = Document.objects.get()
    assert f"{server.url('/msa')}: fetching as document {document.pk}" in out.getvalue()
    assert "msa.html: ready" in out.getvalue() or "ready ·" in out.getvalue()
    assert "javascript:alert(1): refused:" in err.getvalue()
    assert (document.status, document.original_name) == ("ready", "msa.html")
