"""An admin confirms or corrects a document's type on its page; every change is kept and the
managers' figures are broken down by the new type."""

from __future__ import annotations

import pytest
from django.urls import reverse

from dashboards.figures import reviewer_counts
from ingest.models import Document
from reviewer.decisions import record_decision
from reviewer.models import AppendOnlyError, DocumentTypeChange, Review
from tests.factories import make_reviewable


def _read_from_title(document, doc_type="Service"):
    Document.objects.filter(pk=document.pk).update(
        doc_type=doc_type, doc_type_source=Document.TypeSource.TITLE
    )


@pytest.mark.django_db
def test_admin_corrects_a_type_read_from_the_title_and_the_old_one_is_kept(client, engagement, make_member):
    contract = make_reviewable(engagement)
    doc = contract.document
    _read_from_title(doc)
    admin = make_member(engagement, "admin", username="ada")
    client.force_login(admin)

    page = client.get(reverse("document", args=[doc.pk])).content.decode()
    assert "from title" in page and "Confirm or correct the type" in page
    assert 'value="Transportation"' in page  # the title reader's names are offered

    response = client.post(
        reverse("document-type", args=[doc.pk]), {"doc_type": "  Transportation "}, follow=True
    )
    html = response.content.decode()
    assert "Document type set from “Service” to “Transportation”" in html
    doc.refresh_from_db()
    assert (doc.doc_type, doc.doc_type_source) == ("Transportation", "admin")
    change = DocumentTypeChange.objects.get(document=doc)
    assert (change.old_type, change.old_source, change.new_type, change.changed_by) == (
        "Service",
        "title",
        "Transportation",
        admin,
    )
    assert "ada set “Transportation” (was “Service”, read from its title)" in html
    assert "from title</abbr>" not in html

    # the managers' strata follow the document's current type
    record_decision(
        extraction_id=contract.extractions["Governing Law"].pk,
        user=admin,
        decision="accept",
        reason="",
        seen_review_id=0,
        seen_version=1,
    )
    assert {s["doc_type"] for s in reviewer_counts([engagement.pk])["strata"]} == {"Transportation"}


@pytest.mark.django_db
def test_a_type_read_from_the_title_can_be_confirmed_as_it_is(client, engagement, make_member):
    doc = make_reviewable(engagement).document
    _read_from_title(doc, "Distributor")
    client.force_login(make_member(engagement, "admin"))
    url = reverse("document-type", args=[doc.pk])
    assert (
        "Document type set “Distributor”"
        in client.post(url, {"doc_type": "Distributor"}, follow=True).content.decode()
    )
    doc.refresh_from_db()
    assert doc.doc_type_source == "admin"
    again = client.post(url, {"doc_type": "Distributor"}, follow=True).content.decode()
    assert "The type is already “Distributor”" in again
    assert DocumentTypeChange.objects.filter(document=doc).count() == 1


@pytest.mark.django_db
def test_a_type_saved_from_a_clause_returns_to_that_clause(client, engagement, make_member):
    contract = make_reviewable(engagement)
    doc, ex = contract.document, next(iter(contract.extractions.values()))
    client.force_login(make_member(engagement, "admin"))
    url, clause = reverse("document-type", args=[doc.pk]), reverse("clause", args=[doc.pk, ex.pk])
    assert f'name="next" value="{clause}"' in client.get(clause).content.decode()
    assert (
        client.post(url, {"doc_type": "Lease", "next": clause})["Location"] == clause
    )  # the reviewer's place
    for elsewhere in (
        "https://evil.example/documents/",
        "//evil.example/",
        reverse("home"),
        reverse("document", args=[doc.pk + 1]),
    ):  # never off this document's pages
        got = client.post(url, {"doc_type": "Supply", "next": elsewhere})
        assert got["Location"] == reverse("document", args=[doc.pk])


@pytest.mark.django_db
def test_bad_or_unallowed_type_changes_change_nothing(client, engagement, make_member):
    doc = make_reviewable(engagement).document
    url = reverse("document-type", args=[doc.pk])
    for role in ("auditor", "manager"):
        client.force_login(make_member(engagement, role))
        assert client.post(url, {"doc_type": "Lease"}).status_code == 403
        assert 'id="doc-type-input"' not in client.get(reverse("document", args=[doc.pk])).content.decode()
    client.force_login(make_member(engagement, "admin"))
    got = client.get(url)  # e.g. the sign-in coming back to it: changes nothing, shows the document
    assert got.status_code == 302 and got["Location"] == reverse("document", args=[doc.pk])
    assert "Type a document type." in client.post(url, {"doc_type": "   "}, follow=True).content.decode()
    too_long = client.post(url, {"doc_type": "x" * 101}, follow=True).content.decode()
    assert "at most 100 characters" in too_long
    control = client.post(url, {"doc_type": "Lease\x00"}, follow=True)  # a hand-made request: was a 500
    assert control.status_code == 200 and "cannot hold control characters" in control.content.decode()
    doc.refresh_from_db()
    assert (doc.doc_type, DocumentTypeChange.objects.count()) == ("MSA", 0)


@pytest.mark.django_db
def test_other_engagements_documents_are_not_found(client, engagement, make_member):
    from engagements.models import Engagement

    other = Engagement.objects.create(name="Other audit")
    doc = make_reviewable(other).document
    client.force_login(make_member(engagement, "admin"))
    assert client.post(reverse("document-type", args=[doc.pk]), {"doc_type": "Lease"}).status_code == 404


@pytest.mark.django_db
def test_type_changes_and_reviews_are_append_only(engagement, make_member):
    contract = make_reviewable(engagement)
    admin = make_member(engagement, "admin")
    change = DocumentTypeChange.objects.create(
        document=contract.document, old_type="MSA", new_type="Supply", changed_by=admin
    )
    review = record_decision(
        extraction_id=contract.extractions["Governing Law"].pk,
        user=admin,
        decision="accept",
        reason="",
        seen_review_id=0,
        seen_version=1,
    )
    for row in (change, review):
        with pytest.raises(AppendOnlyError, match="append-only"):
            row.save()
        with pytest.raises(AppendOnlyError, match="cannot be deleted"):
            row.delete()
    assert DocumentTypeChange.objects.count() == 1 and Review.objects.count() == 1


@pytest.mark.django_db
def test_a_document_without_a_type_shows_the_form_open(client, engagement, make_member):
    doc = make_reviewable(engagement).document
    Document.objects.filter(pk=doc.pk).update(doc_type="", doc_type_source="")
    client.force_login(make_member(engagement, "admin"))
    page = client.get(reverse("document", args=[doc.pk])).content.decode()
    assert '<details class="type-edit small" open>' in page and "Set the type" in page
    _read_from_title(doc)
    page = client.get(reverse("document", args=[doc.pk])).content.decode()
    assert '<details class="type-edit small">' in page and "Confirm or correct the type" in page
