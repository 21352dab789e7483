"""A document saved as queued whose pipeline never reached the workers (the web process died between the
commit and the queueing): the sweep sends it again after ``REQUEUE_UNSENT_AFTER``, and an upload of the same
bytes sends it at once; a document whose pipeline is waiting in the queue, or run by its caller, is left."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from demo import make_paper_markdown
from ingest import intake, tasks
from ingest.intake import intake_file
from ingest.models import Document
from taskstate.models import TaskState
from tests.integration.ingest_helpers import assert_consistent, wait_terminal

pytestmark = pytest.mark.django_db(transaction=True)


def _lost_on_the_way(monkeypatch, engagement, path, then=None) -> Document:
    """Save a document as an upload does, its pipeline never queued (the process dies after the commit)."""
    monkeypatch.setattr(tasks, "enqueue_pipeline", lambda document_id, then=None: None)
    document = intake_file(engagement, path, filename=path.name, then=then).document
    monkeypatch.undo()
    assert Document.objects.get(pk=document.pk).status == Document.Status.QUEUED
    return document


def _long_ago(document: Document, settings) -> None:
    past = timezone.now() - timedelta(seconds=settings.REQUEUE_UNSENT_AFTER + 60)
    Document.objects.filter(pk=document.pk).update(updated_at=past)
    Document.objects.filter(pk=document.pk, pipeline_queued_at__isnull=False).update(pipeline_queued_at=past)


def test_a_queued_document_whose_pipeline_was_never_sent_is_sent_by_the_sweep(
    celery_worker, engagement, tmp_path, monkeypatch, settings
):
    truth = make_paper_markdown(tmp_path / "paper.md")
    lost = _lost_on_the_way(monkeypatch, engagement, truth.path)
    assert tasks.requeue_unsent_documents() == "0 re-queued"  # within the grace period: left alone
    _long_ago(lost, settings)

    def upload(name: str, **kwargs) -> Document:
        path = tmp_path / name
        path.write_text(f"# {name}\n\nThe {name} agreement is governed by the laws of Delaware.\n")
        document = intake_file(engagement, path, filename=name, **kwargs).document
        _long_ago(document, settings)
        return document

    monkeypatch.setattr(tasks, "enqueue_pipeline", lambda document_id, then=None: None)
    waiting = upload("waiting.md")  # its task waits in the queue behind a large batch
    TaskState.objects.create(
        task_id="waiting-convert",
        name="ingest.convert",
        state="pending",
        args=f"[{waiting.pk}]",
        queued_at=timezone.now(),
    )
    monkeypatch.undo()
    inline = upload("inline.md", enqueue=False)  # its caller runs the pipeline itself (ingest --inline)

    assert tasks.requeue_unsent_documents() == "1 re-queued"
    [ready] = wait_terminal([lost], worker=celery_worker)
    assert_consistent(ready)
    # what the sweep reads of a live task is what a real queueing writes
    assert TaskState.objects.filter(name="ingest.convert", args=f"[{lost.pk}]").exists()
    assert {d.pk: d.status for d in Document.objects.filter(pk__in=[waiting.pk, inline.pk])} == {
        waiting.pk: "queued",
        inline.pk: "queued",
    }
    assert tasks.requeue_unsent_documents() == "0 re-queued"


def test_the_sweep_sends_what_the_upload_asked_to_run_after_the_pipeline(
    engagement, tmp_path, monkeypatch, settings
):
    """An upload with "extract" ticked: the re-sent pipeline still ends with its extraction."""
    from extraction.launch import EXTRACT_WHEN_READY, extract_after_ingest

    truth = make_paper_markdown(tmp_path / "paper.md")
    lost = _lost_on_the_way(monkeypatch, engagement, truth.path, then=extract_after_ingest(7))
    _long_ago(lost, settings)
    sent = []
    monkeypatch.setattr(tasks, "enqueue_pipeline", lambda pk, then=None: sent.append((pk, then and then(pk))))
    assert tasks.requeue_unsent_documents() == "1 re-queued"
    [(pk, then)] = sent
    assert pk == lost.pk and then["task"] == EXTRACT_WHEN_READY and list(then["args"]) == [lost.pk, 7]


def test_an_upload_of_a_document_stuck_queued_sends_its_pipeline(
    engagement, tmp_path, monkeypatch, settings, make_member
):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client
    from django.urls import reverse

    truth = make_paper_markdown(tmp_path / "paper.md")
    lost = _lost_on_the_way(monkeypatch, engagement, truth.path)
    sent = []
    monkeypatch.setattr(tasks, "enqueue_pipeline", lambda pk, then=None: sent.append(pk))
    fresh = intake_file(engagement, truth.path, filename="paper.md")
    assert not fresh.retried and sent == []  # just queued: it may be on its way
    _long_ago(lost, settings)

    client = Client()
    client.force_login(make_member(engagement, "admin"))
    said = client.post(
        reverse("engagement-upload", args=[engagement.pk]),
        {"files": [SimpleUploadedFile("paper.md", truth.path.read_bytes())]},
    ).content.decode()
    assert sent == [lost.pk] and "never started" in said and "Already uploaded" not in said
    again = intake_file(engagement, truth.path, filename="paper.md")  # sent a moment ago: left alone
    assert not again.retried and sent == [lost.pk]


def test_two_uploads_at_once_of_a_stuck_document_send_it_once(engagement, tmp_path, monkeypatch, settings):
    from tests.integration.ingest_helpers import twice_at_once

    truth = make_paper_markdown(tmp_path / "paper.md")
    lost = _lost_on_the_way(monkeypatch, engagement, truth.path)
    _long_ago(lost, settings)
    sent = []
    monkeypatch.setattr(intake, "enqueue_on_commit", lambda document_id, then=None: sent.append(document_id))
    results, errors = twice_at_once(lambda: intake_file(engagement, truth.path, filename="paper.md"))
    assert errors == [] and sorted(r.retried for r in results) == [False, True] and sent == [lost.pk]
