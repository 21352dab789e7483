"""An engagement admin deletes a wrongly uploaded document, through the Django test client on the real
services; a document whose clauses carry reviewer decisions stays (every decision is kept)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse

from extraction.models import Citation, Extraction
from ingest.models import Chunk, Document, Page
from reviewer.decisions import record_decision
from reviewer.models import CaseSummary, Review
from tests.factories import make_reviewable
from tests.markup import elements

TITLE = "Master Services Agreement"


@pytest.fixture
def admin(engagement, make_member, client):
    user = make_member(engagement, "admin")
    client.force_login(user)
    return user


def _delete_url(doc) -> str:
    return reverse("document-delete", args=[doc.pk])


def _delete_forms(html: str, doc) -> list[dict]:
    return [f for f in elements(html, "form") if f.get("action") == _delete_url(doc)]


def _disclosure(html: str) -> str:
    return html.split('<details class="delete-document')[1].split("</details>")[0]


def _decide(ex, user):
    return record_decision(
        extraction_id=ex.pk, user=user, decision="accept", seen_review_id=0, seen_version=1
    )


@pytest.mark.django_db
def test_an_admin_is_told_what_goes_then_deletes_the_document_with_all_it_holds(
    client, admin, contract, engagement, django_capture_on_commit_callbacks
):
    doc = contract.document
    CaseSummary.objects.create(document=doc, created_by=admin, engine="offline")
    doc.file.save("wrong-upload.pdf", ContentFile(b"%PDF-1.4 the wrong contract"))
    stored = Path(default_storage.path(doc.file.name))
    assert stored.is_file()
    clauses = Extraction.objects.filter(document=doc).count()

    html = client.get(reverse("document", args=[doc.pk])).content.decode()
    (form,) = _delete_forms(html, doc)
    assert form["method"] == "post"
    told = _disclosure(html)  # the button is behind it, with the document named and what goes with it
    assert "<summary>Delete this document</summary>" in told and f'action="{_delete_url(doc)}"' in told
    assert "csrfmiddlewaretoken" in told and f"Delete “{TITLE}”</button>" in told
    for what in (
        f"{len(contract.pages)} pages",
        f"{len(contract.chunks)} chunks",
        f"{clauses} extracted clauses",
        "1 summary",
    ):
        assert what in told, what

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(_delete_url(doc))
    assert response.status_code == 302 and response["Location"] == reverse("engagement", args=[engagement.pk])
    page = client.get(response["Location"]).content.decode()
    assert f"Deleted “{TITLE}”" in page
    assert not Document.objects.filter(pk=doc.pk).exists()
    for model in (Page, Chunk, Extraction, CaseSummary):
        assert not model.objects.filter(document_id=doc.pk).exists(), model
    assert not Citation.objects.filter(extraction__document_id=doc.pk).exists()
    assert not stored.exists()  # ingest.removal took the stored file once the deletion committed


@pytest.mark.django_db
def test_a_document_with_reviewer_decisions_stays_and_the_page_says_why(
    client, admin, contract, make_member, engagement
):
    doc = contract.document
    auditor = make_member(engagement, "auditor")
    _decide(contract.extractions["Governing Law"], auditor)
    _decide(contract.extractions["Payment"], auditor)

    html = client.get(reverse("document", args=[doc.pk])).content.decode()
    assert not _delete_forms(html, doc)  # no usable control: the disclosure says why instead
    told = _disclosure(html)
    assert "cannot be deleted" in told and "2 reviewer decisions" in told and "stays" in told

    response = client.post(_delete_url(doc))  # posted anyway (an old tab): refused in words
    assert response.status_code == 302 and response["Location"] == reverse("document", args=[doc.pk])
    page = client.get(response["Location"]).content.decode()
    assert f"“{TITLE}” stays" in page and "2 reviewer decisions" in page and "audit trail" in page
    assert Document.objects.filter(pk=doc.pk).exists()
    assert Review.objects.filter(extraction__document=doc).count() == 2


@pytest.mark.django_db
def test_a_decision_saved_after_the_check_still_keeps_the_document(
    client, admin, contract, make_member, engagement, monkeypatch
):
    """The count is read before the deletion; a decision recorded in between is still refused by the
    database's protection of reviewed clauses, and the admin told why."""
    from dataclasses import replace

    from reviewer import deletions

    doc, counted = contract.document, deletions.contents
    _decide(contract.extractions["Payment"], make_member(engagement, "auditor"))
    monkeypatch.setattr(deletions, "contents", lambda document_id: replace(counted(document_id), decisions=0))
    response = client.post(_delete_url(doc))
    assert response["Location"] == reverse("document", args=[doc.pk])
    monkeypatch.undo()
    assert "1 reviewer decision " in client.get(response["Location"]).content.decode()
    assert Document.objects.filter(pk=doc.pk).exists() and Review.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["auditor", "manager"])
def test_auditors_and_managers_cannot_delete_a_document(client, contract, make_member, engagement, role):
    doc = contract.document
    client.force_login(make_member(engagement, role))
    assert not _delete_forms(client.get(reverse("document", args=[doc.pk])).content.decode(), doc)
    response = client.post(_delete_url(doc))
    assert response.status_code == 403 and "needs the admin role" in response.content.decode()
    assert Document.objects.filter(pk=doc.pk).exists()


@pytest.mark.django_db
def test_another_engagements_document_is_not_found(client, contract, make_member):
    from engagements.models import Engagement

    other = Engagement.objects.create(name="Another client")
    client.force_login(make_member(other, "admin"))
    assert client.post(_delete_url(contract.document)).status_code == 404
    assert Document.objects.filter(pk=contract.document.pk).exists()


@pytest.mark.django_db
def test_a_get_of_the_delete_url_goes_back_to_the_document_and_deletes_nothing(client, admin, contract):
    doc = contract.document
    response = client.get(_delete_url(doc))
    assert response.status_code == 302 and response["Location"] == reverse("document", args=[doc.pk])
    assert Document.objects.filter(pk=doc.pk).exists()


@pytest.mark.django_db(transaction=True)  # the deletion commits while the stage works, as in use
def test_a_document_deleted_from_its_page_while_it_is_converted_ends_its_pipeline_quietly(
    client, admin, engagement, tmp_path, monkeypatch
):
    from demo import make_paper_markdown
    from ingest import pipeline
    from ingest.intake import intake_file
    from ingest.models import DocumentStage

    document = intake_file(
        engagement, make_paper_markdown(tmp_path / "paper.md").path, filename="paper.md", enqueue=False
    ).document
    stored = Path(document.file.path)
    real, answers = pipeline.STAGE_FUNCTIONS["convert"], []

    def deleted_meanwhile(doc, report):
        answers.append(client.post(_delete_url(doc)))  # the admin deletes it from the document page
        return real(doc, report)

    monkeypatch.setitem(pipeline.STAGE_FUNCTIONS, "convert", deleted_meanwhile)
    assert not pipeline.run_stage(document.pk, "convert")
    assert answers[0]["Location"] == reverse("engagement", args=[engagement.pk])
    assert not Document.objects.filter(pk=document.pk).exists()
    assert not DocumentStage.objects.filter(document_id=document.pk).exists()
    assert not stored.exists()
    monkeypatch.undo()
    assert not any(pipeline.run_stage(document.pk, later) for later in pipeline.STAGES[1:])


@pytest.mark.django_db(transaction=True)
def test_a_document_deleted_while_it_is_embedded_stops_its_stage_at_the_next_group(
    client, admin, engagement, tmp_path, monkeypatch
):
    """The embed stage went on embedding every chunk of a deleted document (hours, for a large one); it
    stops once the group in hand is done."""
    from functools import partial

    from ingest import embeddings, pipeline
    from ingest.intake import intake_file
    from ingest.models import DocumentStage

    path = tmp_path / "long.md"
    path.write_text(
        "\n\n".join(
            f"## {n}. Clause {n}\n\n"
            + f"The Supplier shall deliver lot {n} to the Buyer within {n} days. " * 25
            for n in range(1, 41)
        )
    )
    document = intake_file(engagement, path, filename="long.md", enqueue=False).document
    assert pipeline.run_stage(document.pk, "convert") and pipeline.run_stage(document.pk, "chunk")
    assert Chunk.objects.filter(document=document).count() >= 32  # four groups of eight and more
    embedder = embeddings.get_embedder()
    real_encode, groups, answers = embedder.encode, [], []

    def encode_then_delete(texts):
        groups.append(len(texts))
        vectors = real_encode(texts)
        if len(groups) == 1:
            answers.append(client.post(_delete_url(document)))  # the admin deletes it meanwhile
        return vectors

    monkeypatch.setattr(embedder, "encode", encode_then_delete)
    monkeypatch.setattr(embeddings, "embed_texts", partial(embeddings.embed_texts, group_size=8))
    assert not pipeline.run_stage(document.pk, "embed")
    assert answers[0].status_code == 302 and not Document.objects.filter(pk=document.pk).exists()
    assert groups == [8]  # the group in hand was finished; no other was started
    assert not DocumentStage.objects.filter(document_id=document.pk).exists()


@pytest.mark.django_db
def test_the_django_admin_deletes_a_document_and_refuses_as_the_app_does(
    client, engagement, make_member, django_user_model
):
    """Pages and clauses stay read-only in the Django admin, yet they go with their document there too;
    a document with reviewer decisions stays."""
    kept, wrong = make_reviewable(engagement), make_reviewable(engagement, title="Wrong Upload", seed=1)
    _decide(kept.extractions["Payment"], make_member(engagement, "auditor"))
    client.force_login(django_user_model.objects.create_superuser("root", password="x-long-password-1"))

    url = reverse("admin:ingest_document_delete", args=[wrong.document.pk])
    assert "permission to delete" not in client.get(url).content.decode()
    assert client.post(url, {"post": "yes"}).status_code == 302
    assert not Document.objects.filter(pk=wrong.document.pk).exists()
    assert not Extraction.objects.filter(document_id=wrong.document.pk).exists()

    url = reverse("admin:ingest_document_delete", args=[kept.document.pk])
    refused = client.post(url, {"post": "yes"}).content.decode()
    assert "protected" in refused
    assert Document.objects.filter(pk=kept.document.pk).exists() and Review.objects.count() == 1
    # the rows themselves are still not the admin's to delete one by one
    page = Page.objects.filter(document=kept.document).first()
    assert (
        client.post(reverse("admin:ingest_page_delete", args=[page.pk]), {"post": "yes"}).status_code == 403
    )


def test_the_django_admin_deletes_an_engagement_nobody_reviewed_and_keeps_one_with_decisions(
    client, engagement, make_member, django_user_model
):
    # it was refused outright ("no permission to delete: page, extraction"), the rows read-only in the admin
    from engagements.models import Engagement

    other = Engagement.objects.create(name="Wrong client")
    make_reviewable(other, title="Wrong Upload")
    kept = make_reviewable(engagement)
    _decide(kept.extractions["Payment"], make_member(engagement, "auditor"))
    client.force_login(django_user_model.objects.create_superuser("root", password="x-long-password-1"))
    url = reverse("admin:engagements_engagement_delete", args=[other.pk])
    assert "permission to delete" not in client.get(url).content.decode()
    assert client.post(url, {"post": "yes"}).status_code == 302
    assert (
        not Engagement.objects.filter(pk=other.pk).exists()
        and not Document.objects.filter(title="Wrong Upload").exists()
    )
    refused = client.post(
        reverse("admin:engagements_engagement_delete", args=[engagement.pk]), {"post": "yes"}
    )
    assert "protected" in refused.content.decode() and Engagement.objects.filter(pk=engagement.pk).exists()
