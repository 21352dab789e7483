"""Upload, find, members, catalog and concurrent decisions, on the real services."""
from __future__ import annotations

import threading

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.urls import reverse

from extraction.models import ClauseType, Extraction
from ingest.models import Document
from reviewer.decisions import StaleDecision, record_decision
from reviewer.models import Review
from tests.factories import make_reviewable

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.mark.django_db(transaction=True)
def test_two_reviewers_at_once_one_wins_the_other_is_refused(engagement, make_member):
    contract = make_reviewable(engagement)
    ex = contract.extractions["Governing Law"]
    users = [make_member(engagement, "auditor", username=n) for n in ("alice", "bob")]
    barrier, outcomes = threading.Barrier(2), {}

    def decide(user, decision):
        try:
            barrier.wait()
            record_decision(extraction_id=ex.pk, user=user, decision=decision, reason="r",
                            seen_review_id=0, seen_version=1)
            outcomes[user.username] = "saved"
        except StaleDecision as exc:
            outcomes[user.username] = str(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=decide, args=(u, d)) for u, d in zip(users, ("accept", "reject"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(v == "saved" for v in outcomes.values()) == [False, True], outcomes
    loser = next(k for k, v in outcomes.items() if v != "saved")
    winner = next(k for k, v in outcomes.items() if v == "saved")
    assert outcomes[loser].startswith(f"Not saved: {winner} recorded")
    assert Review.objects.filter(extraction=ex).count() == 1


@pytest.mark.django_db
def test_upload_checks_each_file_and_lists_results(client, engagement, make_member, cuad_dir):
    admin = make_member(engagement, "admin")
    client.force_login(admin)
    pdf = next((cuad_dir / "pdf").glob("*.pdf"))
    files = [SimpleUploadedFile("contract.pdf", pdf.read_bytes(), content_type="application/pdf"),
             SimpleUploadedFile("fake.pdf", b"just text, not a PDF\n", content_type="application/pdf"),
             SimpleUploadedFile("empty.docx", b"", content_type="application/octet-stream")]
    response = client.post(reverse("engagement-upload", args=[engagement.pk]),
                           {"files": files, "doc_type": "Supply"}, **HX)
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert html.count('class="file-result ok"') == 1 and html.count('class="file-result bad"') == 2
    assert "is empty" in html
    doc = Document.objects.get(engagement=engagement)
    assert doc.original_name == "contract.pdf" and doc.doc_type == "Supply" and doc.uploaded_by == admin
    assert 'hx-trigger="every 2s"' in html  # the new document is followed live
    again = client.post(reverse("engagement-upload", args=[engagement.pk]),
                        {"files": [SimpleUploadedFile("copy.pdf", pdf.read_bytes())]}, **HX).content.decode()
    assert "Already uploaded" in again and Document.objects.count() == 1
    assert client.post(reverse("engagement-upload", args=[engagement.pk]), {}, **HX).status_code == 422

    # the same bytes again after processing failed on our side: processed again, not "already uploaded"
    Document.objects.filter(pk=doc.pk).update(status="failed", error_code="internal", error="boom")
    retried = client.post(reverse("engagement-upload", args=[engagement.pk]),
                          {"files": [SimpleUploadedFile("copy.pdf", pdf.read_bytes())]}, **HX).content.decode()
    assert "processing it again" in retried
    doc.refresh_from_db()
    assert doc.status == "queued" and doc.error_code == "" and Document.objects.count() == 1
    # ... but a file refused for what it is stays refused
    Document.objects.filter(pk=doc.pk).update(status="failed", error_code="encrypted", error="locked")
    refused = client.post(reverse("engagement-upload", args=[engagement.pk]),
                          {"files": [SimpleUploadedFile("copy.pdf", pdf.read_bytes())]}, **HX).content.decode()
    assert "Uploaded before as" in refused and "refused: locked" in refused
    assert Document.objects.get(pk=doc.pk).status == "failed"


@pytest.mark.django_db
def test_find_a_clause_runs_the_extraction_service(client, engagement, make_member):
    contract = make_reviewable(engagement)
    client.force_login(make_member(engagement, "auditor"))
    url = reverse("find", args=[contract.document.pk])
    law = ClauseType.objects.get(name="Governing Law")
    response = client.post(url, {"clause_type": law.pk}, **HX)
    assert response.status_code == 200
    found = Extraction.objects.latest("id")
    assert found.clause_type == law and found.run.engagement == engagement
    assert response["HX-Push-Url"] == reverse("clause", args=[found.document_id, found.pk])
    html = response.content.decode()
    assert f'data-current-extraction="{found.pk}"' in html and 'id="clause-list" ' in html and "hx-swap-oob" in html
    plain = client.post(url, {"question": "Who pays the unit fee?"})
    answer = Extraction.objects.latest("id")
    assert plain.status_code == 302 and plain["Location"] == reverse("clause", args=[answer.document_id, answer.pk])
    refused = client.post(url, {}, **HX)
    assert refused.status_code == 422 and refused["HX-Retarget"] == "#find-form"
    assert "Pick a clause type or type a question." in refused.content.decode()


@pytest.mark.django_db
def test_finding_a_clause_already_listed_opens_the_listed_item(client, engagement, make_member):
    contract = make_reviewable(engagement)
    auditor = make_member(engagement, "auditor")
    client.force_login(auditor)
    url = reverse("find", args=[contract.document.pk])
    law = ClauseType.objects.get(name="Governing Law")
    client.post(url, {"clause_type": law.pk}, **HX)
    first = Extraction.objects.latest("id")
    record_decision(extraction_id=first.pk, user=auditor, decision="accept", reason="checked", seen_review_id=0,
                    seen_version=first.version)

    response = client.post(url, {"clause_type": law.pk}, **HX)
    again = Extraction.objects.latest("id")
    assert again.pk != first.pk and again.clause_text == first.clause_text  # extracted again, the same answer
    assert response["HX-Push-Url"] == reverse("clause", args=[first.document_id, first.pk])
    html = response.content.decode()
    assert f'data-current-extraction="{first.pk}"' in html and "2 runs" in html
    assert f'id="clause-item-{again.pk}"' not in html


@pytest.mark.django_db
def test_find_is_for_reviewers_not_managers(client, engagement, make_member):
    contract = make_reviewable(engagement)
    client.force_login(make_member(engagement, "manager"))
    assert client.post(reverse("find", args=[contract.document.pk]), {"question": "x y z"}).status_code == 403
    assert 'id="find-form"' not in client.get(reverse("document", args=[contract.document.pk])).content.decode()


@pytest.mark.django_db
def test_members_and_catalog_are_for_admins(client, engagement, make_member, django_user_model):
    admin = make_member(engagement, "admin")
    auditor = make_member(engagement, "auditor")
    client.force_login(auditor)
    assert client.post(reverse("catalog"), {"name": "X", "description": "d", "query": "q", "kind": "text"}).status_code == 403
    client.force_login(admin)
    newbie = django_user_model.objects.create_user("newbie", password="x-long-password-1")
    url = reverse("engagement-members", args=[engagement.pk])
    assert client.post(url, {"action": "add", "username": "newbie", "role": "manager"}).status_code == 302
    assert newbie.memberships.get().role == "manager"
    assert "No user named" in client.post(url, {"action": "add", "username": "ghost", "role": "auditor"}).content.decode()
    own = admin.memberships.get()
    client.post(url, {"membership": own.pk, "remove": "on"})
    assert admin.memberships.exists()  # the last admin stays
    response = client.post(reverse("catalog"), {"name": "Data Protection", "description": "GDPR terms",
                                                "query": "personal data", "kind": "text"})
    assert response.status_code == 302 and ClauseType.objects.get(name="Data Protection").slug == "data-protection"
    for junk in ("abc", "", "\u00b2"):  # a malformed id changes nothing and is no server error
        assert client.post(reverse("catalog"), {"retire": junk}).status_code == 302
    added = ClauseType.objects.get(name="Data Protection")
    for _ in range(2):  # a double click retires it, it does not flip it back
        assert client.post(reverse("catalog"), {"retire": added.pk}).status_code == 302
    added.refresh_from_db()
    assert not added.active
    client.post(reverse("catalog"), {"reactivate": added.pk})
    added.refresh_from_db()
    assert added.active


@pytest.mark.django_db
def test_a_catalog_name_never_passes_for_a_free_question(client, engagement, make_member):
    from extraction.service import question_type

    client.force_login(make_member(engagement, "admin"))
    response = client.post(reverse("catalog"), {"name": "Q-Score", "description": "A customer score",
                                                "query": "quality score", "kind": "value"})
    assert response.status_code == 302
    score = ClauseType.objects.get(name="Q-Score")
    assert not score.slug.startswith("q-") and "Q-Score" in client.get(reverse("catalog")).content.decode()
    refused = client.post(reverse("catalog"), {"name": "Q: Is there a cap", "description": "d", "query": "q",
                                               "kind": "text"})
    assert refused.status_code == 422 and "kept for free questions" in refused.content.decode()
    asked = question_type("Is there a cap on liability")  # a question stays out of the catalog's reach
    client.post(reverse("catalog"), {"reactivate": asked.pk})
    asked.refresh_from_db()
    assert not asked.active


@pytest.mark.django_db
def test_the_django_admin_cannot_rewrite_an_extracted_clause(client, engagement, django_user_model):
    contract = make_reviewable(engagement)
    ex = contract.extractions["Payment"]
    staff = django_user_model.objects.create_superuser("root", password="x-long-password-1")
    client.force_login(staff)
    url = reverse("admin:extraction_extraction_change", args=[ex.pk])
    assert client.get(url).status_code == 200  # still readable
    response = client.post(url, {"clause_text": "a unit fee of $999 per record", "status": "found", "version": 1})
    assert response.status_code == 403
    ex.refresh_from_db()
    assert "$247.83" in ex.clause_text  # a clause changes only through a reviewer's correction, which is kept
    assert client.post(reverse("admin:extraction_extraction_delete", args=[ex.pk]), {"post": "yes"}).status_code == 403


@pytest.mark.django_db
def test_uploading_the_same_file_again_with_extract_ticked_extracts_it(client, engagement, make_member):
    from extraction.models import ClauseTask

    client.force_login(make_member(engagement, "admin"))
    url = reverse("engagement-upload", args=[engagement.pk])
    body = b"# Terms\n\nThe Supplier shall pay a fee of $247.83 per record.\n"
    client.post(url, {"files": [SimpleUploadedFile("terms.md", body)]}, **HX)  # "extract" left unticked
    doc = Document.objects.get(engagement=engagement)
    Document.objects.filter(pk=doc.pk).update(status="ready")
    assert not ClauseTask.objects.exists()
    again = client.post(url, {"files": [SimpleUploadedFile("terms.md", body)], "extract": "on"}, **HX)
    assert "its clauses are being extracted" in again.content.decode()
    assert ClauseTask.objects.filter(document=doc).exists()
    third = client.post(url, {"files": [SimpleUploadedFile("terms.md", body)], "extract": "on"}, **HX)
    assert "its clauses were extracted before" in third.content.decode()
