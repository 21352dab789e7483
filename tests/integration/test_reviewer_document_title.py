"""An admin renames a document; the file's own name stays and every earlier title is kept."""

from __future__ import annotations

import pytest
from django.urls import reverse

from engagements.models import Engagement
from ingest.models import Document
from reviewer.models import AppendOnlyError, DocumentTitleChange


def _document(engagement, name="scan_0042_FINAL(2).pdf") -> Document:
    return Document.objects.create(
        engagement=engagement, original_name=name, title=name, status=Document.Status.READY
    )


@pytest.mark.django_db
def test_an_admin_renames_a_document_and_the_old_title_is_kept(client, engagement, make_member):
    doc = _document(engagement)
    admin = make_member(engagement, "admin")
    client.force_login(admin)
    url = reverse("document-title", args=[doc.pk])
    page = client.get(url).content.decode()
    assert "scan_0042_FINAL(2).pdf" in page and 'name="title"' in page
    assert client.post(url, {"title": "  Master Services   Agreement  "}).status_code == 302
    doc.refresh_from_db()
    assert (doc.title, doc.original_name) == ("Master Services Agreement", "scan_0042_FINAL(2).pdf")
    change = DocumentTitleChange.objects.get(document=doc)
    assert (change.old_title, change.new_title, change.changed_by) == (
        "scan_0042_FINAL(2).pdf",
        "Master Services Agreement",
        admin,
    )
    for refused in ("", "   ", "Master Services Agreement", "x" * 301, "bad\x07title"):
        assert client.post(url, {"title": refused}).status_code == 422
    assert DocumentTitleChange.objects.count() == 1
    assert "scan_0042_FINAL(2).pdf" in client.get(url).content.decode()  # the earlier title is listed
    with pytest.raises(AppendOnlyError):
        change.delete()
    listed = client.get(reverse("engagement", args=[engagement.pk])).content.decode()
    assert "Master Services Agreement" in listed and f'href="{url}"' in listed


@pytest.mark.django_db
def test_renaming_is_for_the_engagements_admins_only(client, engagement, make_member):
    doc = _document(engagement)
    other = Engagement.objects.create(name="Beta audit 2026")
    url = reverse("document-title", args=[doc.pk])
    client.force_login(make_member(other, "admin"))  # an admin of another engagement: not found
    assert client.get(url).status_code == 404
    assert client.post(url, {"title": "Theirs"}).status_code == 404
    for role in ("auditor", "manager"):
        client.force_login(make_member(engagement, role))
        assert client.post(url, {"title": "Mine"}).status_code == 403
        assert f'href="{url}"' not in client.get(reverse("engagement", args=[engagement.pk])).content.decode()
    doc.refresh_from_db()
    assert doc.title == "scan_0042_FINAL(2).pdf" and not DocumentTitleChange.objects.exists()
