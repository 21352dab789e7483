"""An upload with "extract clauses when ready": the real worker ingests each file, then extracts it
with every active clause type; the documents table keeps refreshing until the clauses are in."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from extraction.launch import create_run, extract_after_ingest, extract_ready_document
from extraction.models import ClauseTask, ClauseType, Extraction, ExtractionRun
from extraction.tasks import extract_when_ready
from ingest.models import Document
from tests.factories import make_document
from tests.integration.extraction_fixtures import wait_until
from tests.integration.ingest_helpers import wait_terminal

pytestmark = pytest.mark.django_db(transaction=True)

CONTRACT = """# MASTER SUPPLY AGREEMENT

This Master Supply Agreement is entered into as of March 3, 2021 between Acme Components Inc. ("Supplier")
and Borealis Retail Ltd. ("Customer").

## 2. Fees

Customer shall pay Supplier a unit fee of $247.83 per pallet, invoiced monthly and payable within thirty (30)
days of the invoice date under customer account cust_4711.

## 4. Governing Law

This Agreement is governed by the laws of the State of Delaware, without regard to its conflict of laws rules.
"""


def test_an_upload_is_extracted_when_it_is_ready(client, engagement, make_member, celery_worker):
    admin = make_member(engagement, "admin")
    client.force_login(admin)
    upload = SimpleUploadedFile("supply.md", CONTRACT.encode(), content_type="text/markdown")

    response = client.post(
        reverse("engagement-upload", args=[engagement.pk]), {"files": [upload], "extract": "on"}
    )

    assert "its clauses will be extracted when it is ready" in response.content.decode()
    document = wait_terminal([Document.objects.get(engagement=engagement)], worker=celery_worker)[0]
    assert document.status == "ready", document.error
    finished = ExtractionRun.objects.filter(engagement=engagement, status__in=["done", "failed"])
    wait_until(finished.exists, 180, "the upload's extraction run to finish", celery_worker)
    run = finished.get()
    assert run.status == "done" and run.created_by == admin
    tasks = ClauseTask.objects.filter(run=run)
    assert set(tasks.values_list("document_id", flat=True)) == {document.pk}
    assert tasks.count() == ClauseType.objects.filter(active=True).count()
    law = Extraction.objects.get(run=run, clause_type__name="Governing Law")
    assert law.status == "found" and "State of Delaware" in law.clause_text
    page = client.get(reverse("engagement", args=[engagement.pk])).content.decode()
    found = Extraction.objects.filter(document=document, status="found").count()
    assert 'data-polling="false"' in page and f">{found} found</span>" in page and "to go" not in page
    assert extract_ready_document(document.pk) is None  # the chained task again (a redelivery): no second run
    assert ExtractionRun.objects.filter(engagement=engagement).count() == 1


def test_without_the_tick_nothing_is_promised(client, engagement, make_member, celery_worker):
    client.force_login(make_member(engagement, "admin"))
    upload = SimpleUploadedFile("supply.md", CONTRACT.encode(), content_type="text/markdown")
    html = client.post(
        reverse("engagement-upload", args=[engagement.pk]), {"files": [upload]}
    ).content.decode()
    assert "Queued for processing." in html and "extracted when" not in html
    # the worker ingests it; the test waits, or the flush of its tables deadlocks with that task
    assert wait_terminal(list(Document.objects.filter(engagement=engagement)), worker=celery_worker)
    assert not ExtractionRun.objects.exists()  # and nothing was extracted


def test_the_documents_table_refreshes_while_clauses_are_being_extracted(client, engagement, make_member):
    document, _, _ = make_document(engagement)
    run = create_run(engagement, documents=[document], enqueue=False)
    client.force_login(make_member(engagement, "auditor"))
    url = reverse("engagement-documents", args=[engagement.pk])
    html = client.get(url).content.decode()
    n = ClauseTask.objects.filter(run=run).count()
    assert 'data-polling="true"' in html and f"{n} clause types to go" in html
    ClauseTask.objects.filter(run=run).update(status=ClauseTask.Status.DONE)
    html = client.get(url).content.decode()
    assert 'data-polling="false"' in html and "to go" not in html


def test_the_task_chained_after_an_upload_is_extract_when_ready():
    """``extraction.launch`` names the task rather than importing the tasks module: the name is the task's."""
    assert extract_after_ingest(7)(42) == extract_when_ready.si(42, 7)


def test_a_document_that_did_not_become_ready_is_not_extracted(engagement):
    failed, _, _ = make_document(engagement, status="failed")
    assert extract_ready_document(failed.pk) is None
    assert extract_ready_document(10**9) is None
    assert not ExtractionRun.objects.exists()


def test_admins_reach_bulk_extraction_from_the_engagement_page(client, engagement, make_member):
    bulk = reverse("bulk:new", args=[engagement.pk])
    client.force_login(make_member(engagement, "admin"))
    assert f'href="{bulk}"' in client.get(reverse("engagement", args=[engagement.pk])).content.decode()
    client.force_login(make_member(engagement, "auditor"))
    assert bulk not in client.get(reverse("engagement", args=[engagement.pk])).content.decode()


def test_the_document_page_clause_list_refreshes_while_extracting_and_is_scoped(
    client, engagement, make_member
):
    from engagements.models import Engagement

    document, _, _ = make_document(engagement)
    run = create_run(engagement, documents=[document], enqueue=False)
    client.force_login(make_member(engagement, "auditor"))
    page = client.get(reverse("document", args=[document.pk])).content.decode()
    url = reverse("document-clauses", args=[document.pk])
    assert f'hx-get="{url}" hx-trigger="every 3s"' in page and "clause types to go" in page
    ClauseTask.objects.filter(run=run).update(status=ClauseTask.Status.DONE)
    listed = client.get(url).content.decode()
    assert (
        'id="clause-list"' in listed and "hx-trigger" not in listed and "No clauses extracted yet" in listed
    )
    other = Engagement.objects.create(name="Other audit")
    client.force_login(make_member(other, "admin", username="outsider"))
    assert client.get(url).status_code == 404
