"""An admin uploads a real CUAD contract (a PDF filed with the SEC) and watches it reach ready."""

from __future__ import annotations

import json
import shutil

import pytest

from ingest.models import Document

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.corpus]


def small_pdf(cuad_dir, pages=2):
    rows = [
        json.loads(line) for line in (cuad_dir / "documents.jsonl").read_text().splitlines() if line.strip()
    ]
    row = min((r for r in rows if r["pages"] >= pages), key=lambda r: (r["pages"], r["pdf"]))
    return cuad_dir / row["pdf"], row["pages"]


def test_admin_uploads_a_cuad_pdf_and_watches_it_reach_ready(
    signed_in, engagement, make_member, cuad_dir, celery_worker, tmp_path
):
    source, pages = small_pdf(cuad_dir)
    pdf = tmp_path / "Supply agreement (CUAD).pdf"
    shutil.copyfile(source, pdf)
    fake = tmp_path / "not-really.pdf"
    fake.write_text("This is a plain text file that claims to be a PDF.\n")
    admin = make_member(engagement, "admin", username="ada")
    s = signed_in(admin)
    s.page.goto(f"/engagements/{engagement.pk}/")
    s.page.click("text=Upload contracts")
    s.page.set_input_files("#upload-files", [str(pdf), str(fake)])
    s.page.fill("#id_doc_type", "Supply")
    assert s.page.is_checked("#id_extract")  # extract when ready: the default
    s.shot("09-upload-form")
    s.page.click("#upload-form button[type=submit]")

    ok = s.page.locator('.file-result[data-filename="Supply agreement (CUAD).pdf"]')
    bad = s.page.locator('.file-result[data-filename="not-really.pdf"]')
    ok.wait_for()
    assert "its clauses will be extracted when it is ready" in ok.text_content()
    assert s.page.eval_on_selector("#upload-files", "input => input.files.length") == 0  # not sent twice
    assert "bad" in bad.get_attribute("class")
    message = bad.text_content()
    assert "not-really.pdf" in message and len(message) > 30  # a sentence, not a code

    document = Document.objects.get(engagement=engagement)
    row = s.page.locator(f'#documents tr[data-document-id="{document.pk}"]')
    seen = set()
    for _ in range(600):  # the table polls every 2 s; the worker converts, chunks, embeds, indexes
        status = row.get_attribute("data-status")
        seen.add(status)
        if status in {"ready", "failed", "needs_ocr"}:
            break
        if "shot" not in seen and row.locator("progress").count():
            seen.add("shot")
            s.shot("10-upload-progress")
        s.page.wait_for_timeout(250)
    document.refresh_from_db()
    assert row.get_attribute("data-status") == "ready", (
        document.status,
        document.error,
        celery_worker.log_tail(),
    )
    assert document.page_count == pages and document.doc_type == "Supply"
    assert row.locator("td.num").first.text_content().strip().startswith(str(pages))
    # then its clauses are extracted; the table keeps refreshing until they are in
    s.page.wait_for_selector('#documents[data-polling="false"]', timeout=120_000)
    assert "found" in row.locator("td").nth(4).text_content(), celery_worker.log_tail()
    s.shot("11-upload-ready")
    assert len(seen - {"shot"}) >= 2, seen  # it was seen moving, not only at the end
    s.page.click(f'#documents tr[data-document-id="{document.pk}"] a:has-text("{document.title}")')
    s.page.wait_for_selector('.page[data-page="1"]')
    assert s.page.locator(".page-text").first.text_content().strip()
