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
from tests.markup import elements

HX = {"HTTP_HX_REQUEST": "true"}


def _decide_at_once(*attempts) -> dict:
    """Each (user, extraction, decision) recorded from its own thread, all let go at the same moment;
    {username: "saved" or the refusal's words}."""
    barrier, outcomes = threading.Barrier(len(attempts)), {}

    def decide(user, ex, decision):
        try:
            barrier.wait()
            record_decision(
                extraction_id=ex.pk,
                user=user,
                decision=decision,
                reason="r",
                seen_review_id=0,
                seen_version=1,
            )
            outcomes[user.username] = "saved"
        except StaleDecision as exc:
            outcomes[user.username] = str(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=decide, args=attempt) for attempt in attempts]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return outcomes


@pytest.mark.django_db(transaction=True)
def test_two_reviewers_at_once_one_wins_the_other_is_refused(engagement, make_member):
    contract = make_reviewable(engagement)
    ex = contract.extractions["Governing Law"]
    alice, bob = [make_member(engagement, "auditor", username=n) for n in ("alice", "bob")]
    outcomes = _decide_at_once((alice, ex, "accept"), (bob, ex, "reject"))
    assert sorted(v == "saved" for v in outcomes.values()) == [False, True], outcomes
    loser = next(k for k, v in outcomes.items() if v != "saved")
    winner = next(k for k, v in outcomes.items() if v == "saved")
    assert outcomes[loser].startswith(f"Not saved: {winner} recorded")
    assert Review.objects.filter(extraction=ex).count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_reviewers_at_once_on_two_runs_repeats_of_a_clause_one_is_refused(engagement, make_member):
    from extraction.models import ExtractionRun

    contract = make_reviewable(engagement)
    first = contract.extractions["Governing Law"]
    run = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
    later = Extraction.objects.create(
        run=run,
        document=first.document,
        clause_type=first.clause_type,
        status=first.status,
        engine=first.engine,
        clause_text=first.clause_text,
        dedupe_key=first.dedupe_key,
    )  # the same answer: listed once
    alice, bob = [make_member(engagement, "auditor", username=n) for n in ("alice", "bob")]
    outcomes = _decide_at_once((alice, first, "reject"), (bob, later, "accept"))
    assert sorted(v == "saved" for v in outcomes.values()) == [False, True], outcomes
    assert Review.objects.filter(extraction__in=[first, later]).count() == 1


@pytest.mark.django_db
def test_the_upload_progress_bar_says_what_it_counts(client, engagement, make_member):
    client.force_login(make_member(engagement, "admin"))
    html = client.get(reverse("engagement-upload", args=[engagement.pk])).content.decode()
    assert [bar.get("aria-label") for bar in elements(html, "progress")] == ["Progress of the upload"]


@pytest.mark.django_db
def test_upload_checks_each_file_and_lists_results(client, engagement, make_member, cuad_dir):
    admin = make_member(engagement, "admin")
    client.force_login(admin)
    pdf = next((cuad_dir / "pdf").glob("*.pdf"))
    files = [
        SimpleUploadedFile("contract.pdf", pdf.read_bytes(), content_type="application/pdf"),
        SimpleUploadedFile("fake.pdf", b"just text, not a PDF\n", content_type="application/pdf"),
        SimpleUploadedFile("empty.docx", b"", content_type="application/octet-stream"),
    ]
    response = client.post(
        reverse("engagement-upload", args=[engagement.pk]), {"files": files, "doc_type": "Supply"}, **HX
    )
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert html.count('class="file-result ok"') == 1 and html.count('class="file-result bad"') == 2
    assert "is empty" in html
    doc = Document.objects.get(engagement=engagement)
    assert doc.original_name == "contract.pdf" and doc.doc_type == "Supply" and doc.uploaded_by == admin
    assert 'hx-trigger="every 2s"' in html  # the new document is followed live
    again = client.post(
        reverse("engagement-upload", args=[engagement.pk]),
        {"files": [SimpleUploadedFile("copy.pdf", pdf.read_bytes())]},
        **HX,
    ).content.decode()
    assert "Already uploaded" in again and Document.objects.count() == 1
    assert client.post(reverse("engagement-upload", args=[engagement.pk]), {}, **HX).status_code == 422

    # the same bytes again after processing failed on our side: processed again, not "already uploaded"
    Document.objects.filter(pk=doc.pk).update(status="failed", error_code="internal", error="boom")
    retried = client.post(
        reverse("engagement-upload", args=[engagement.pk]),
        {"files": [SimpleUploadedFile("copy.pdf", pdf.read_bytes())]},
        **HX,
    ).content.decode()
    assert "processing it again" in retried
    doc.refresh_from_db()
    assert doc.status == "queued" and doc.error_code == "" and Document.objects.count() == 1
    # ... but a file refused for what it is stays refused
    Document.objects.filter(pk=doc.pk).update(status="failed", error_code="encrypted", error="locked")
    refused = client.post(
        reverse("engagement-upload", args=[engagement.pk]),
        {"files": [SimpleUploadedFile("copy.pdf", pdf.read_bytes())]},
        **HX,
    ).content.decode()
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
    assert (
        f'data-current-extraction="{found.pk}"' in html
        and 'id="clause-list" ' in html
        and "hx-swap-oob" in html
    )
    plain = client.post(url, {"question": "Who pays the unit fee?"})
    answer = Extraction.objects.latest("id")
    assert plain.status_code == 302 and plain["Location"] == reverse(
        "clause", args=[answer.document_id, answer.pk]
    )
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
    record_decision(
        extraction_id=first.pk,
        user=auditor,
        decision="accept",
        reason="checked",
        seen_review_id=0,
        seen_version=first.version,
    )

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
    assert (
        'id="find-form"' not in client.get(reverse("document", args=[contract.document.pk])).content.decode()
    )


@pytest.mark.django_db
def test_members_and_catalog_are_for_admins(client, engagement, make_member, django_user_model):
    admin = make_member(engagement, "admin")
    auditor = make_member(engagement, "auditor")
    client.force_login(auditor)
    assert (
        client.post(
            reverse("catalog"), {"name": "X", "description": "d", "query": "q", "kind": "text"}
        ).status_code
        == 403
    )
    client.force_login(admin)
    newbie = django_user_model.objects.create_user("newbie", password="x-long-password-1")
    url = reverse("engagement-members", args=[engagement.pk])
    assert client.post(url, {"action": "add", "username": "newbie", "role": "manager"}).status_code == 302
    assert newbie.memberships.get().role == "manager"
    assert (
        "No user named"
        in client.post(url, {"action": "add", "username": "ghost", "role": "auditor"}).content.decode()
    )
    own = admin.memberships.get()
    client.post(url, {"membership": own.pk, "remove": "on"})
    assert admin.memberships.exists()  # the last admin stays
    assert (
        client.post(
            reverse("catalog"), {"name": "X", "description": "d", "query": "q", "kind": "text"}
        ).status_code
        == 403
    )  # an engagement's admin keeps the engagement's catalog, not the global one
    client.force_login(django_user_model.objects.create_superuser("root", password="x-long-password-1"))
    response = client.post(
        reverse("catalog"),
        {"name": "Data Protection", "description": "GDPR terms", "query": "personal data", "kind": "text"},
    )
    assert (
        response.status_code == 302
        and ClauseType.objects.get(name="Data Protection").slug == "data-protection"
    )
    for junk in ("abc", "", "\u00b2"):  # a malformed id changes nothing and is no server error
        assert client.post(reverse("catalog"), {"retire": junk}).status_code == 302
    added = ClauseType.objects.get(name="Data Protection")
    retire_url = reverse("catalog-retire", args=[added.pk])
    assert client.post(reverse("catalog"), {"retire": added.pk})["Location"] == retire_url  # asks first
    assert client.post(retire_url, {}).status_code == 422  # not without its confirm box
    added.refresh_from_db()
    assert added.active
    for _ in range(2):  # a double click retires it, it does not flip it back
        assert client.post(retire_url, {"confirm": "on"}).status_code == 302
    added.refresh_from_db()
    assert not added.active
    client.post(reverse("catalog"), {"reactivate": added.pk})
    added.refresh_from_db()
    assert added.active


@pytest.mark.django_db
def test_retiring_and_reactivating_a_catalog_type_are_kept_as_changes(client, django_user_model):
    from reviewer.models import ClauseTypeChange

    law = ClauseType.objects.get(name="Governing Law")
    client.force_login(admin := django_user_model.objects.create_superuser("root", password="pw-long-1"))
    for _ in range(2):  # a double click retires it once: one change
        assert client.post(reverse("catalog-retire", args=[law.pk]), {"confirm": "on"}).status_code == 302
    assert client.post(reverse("catalog"), {"reactivate": law.pk}).status_code == 302
    kept = [
        (c.before, c.after, c.changed_by)
        for c in ClauseTypeChange.objects.filter(clause_type=law).order_by("created_at", "id")
    ]
    assert kept == [
        ({"active": True}, {"active": False}, admin),
        ({"active": False}, {"active": True}, admin),
    ]
    page = client.get(reverse("catalog-edit", args=[law.pk])).content.decode()
    assert "Retired" in page and "Reactivated" in page and "Not edited here yet" not in page


@pytest.mark.django_db
def test_a_superuser_edits_a_catalog_type_and_its_earlier_wording_is_kept(
    client, engagement, make_member, django_user_model
):
    from extraction.service import question_type
    from reviewer.models import ClauseTypeChange

    law = ClauseType.objects.get(name="Governing Law")
    url = reverse("catalog-edit", args=[law.pk])
    client.force_login(make_member(engagement, "auditor"))
    assert client.get(url).status_code == 403
    assert (
        client.post(url, {"name": law.name, "description": "d", "query": "q", "kind": "value"}).status_code
        == 403
    )
    client.force_login(make_member(engagement, "admin"))  # an engagement's admin: not the global catalog
    assert client.get(url).status_code == 403
    client.force_login(admin := django_user_model.objects.create_superuser("root", password="pw-long-1"))
    assert f'href="{url}"' in client.get(reverse("catalog")).content.decode()
    page = client.get(url).content.decode()
    assert 'name="name"' in page and "disabled" in page and law.query in page
    old_query = law.query
    wanted = {
        "name": "Choice of Law",
        "description": law.description,
        "query": "laws of the State of; governed by",
        "example": law.example,
        "kind": law.kind,
    }
    saved = client.post(url, wanted, follow=True)
    assert "Saved Governing Law" in saved.content.decode()
    law.refresh_from_db()
    assert (law.name, law.query) == (
        "Governing Law",
        "laws of the State of; governed by",
    )  # a built-in keeps its name
    change = ClauseTypeChange.objects.get(clause_type=law)
    assert (change.before, change.after, change.changed_by) == (
        {"query": old_query},
        {"query": "laws of the State of; governed by"},
        admin,
    )
    assert old_query in client.get(url).content.decode()  # the earlier wording is on the page
    again = client.post(url, wanted, follow=True)
    assert "nothing changed" in again.content.decode() and ClauseTypeChange.objects.count() == 1

    own = ClauseType.objects.create(
        name="Data Protection",
        slug="data-protection",
        description="GDPR terms",
        query="personal data",
        source="custom",
    )
    own_url = reverse("catalog-edit", args=[own.pk])
    fields = {"description": "GDPR terms", "query": "personal data", "example": "", "kind": "text"}
    for taken in ("governing  law", "Q: is there a DPA"):  # a twin of another type, a free question's name
        refused = client.post(own_url, {**fields, "name": taken})
        assert refused.status_code == 422 and 'role="alert"' in refused.content.decode()
    assert client.post(own_url, {**fields, "name": "Personal Data"}).status_code == 302
    own.refresh_from_db()
    assert own.name == "Personal Data" and own.slug == "data-protection"
    assert client.get(reverse("catalog-edit", args=[question_type("Is there a DPA").pk])).status_code == 404
    # twins saved before names were checked ("Personal data" beside "Personal Data") keep their wording editable
    twin = ClauseType.objects.create(
        name="Personal data", slug="personal-data-2", description="d", query="q", source="custom"
    )
    assert client.post(own_url, {**fields, "name": "Personal Data", "query": "GDPR"}).status_code == 302
    assert (
        client.post(
            reverse("catalog-edit", args=[twin.pk]),
            {**fields, "name": "Personal data", "query": "data subject"},
        ).status_code
        == 302
    )
    assert client.post(own_url, {**fields, "name": "Personal  DATA"}).status_code == 422  # a new twin is not


@pytest.mark.django_db
def test_a_catalog_name_never_passes_for_a_free_question(client, django_user_model):
    from extraction.service import question_type

    client.force_login(django_user_model.objects.create_superuser("root", password="pw-long-1"))
    response = client.post(
        reverse("catalog"),
        {"name": "Q-Score", "description": "A customer score", "query": "quality score", "kind": "value"},
    )
    assert response.status_code == 302
    score = ClauseType.objects.get(name="Q-Score")
    assert not score.slug.startswith("q-") and "Q-Score" in client.get(reverse("catalog")).content.decode()
    refused = client.post(
        reverse("catalog"), {"name": "Q: Is there a cap", "description": "d", "query": "q", "kind": "text"}
    )
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
    response = client.post(
        url, {"clause_text": "a unit fee of $999 per record", "status": "found", "version": 1}
    )
    assert response.status_code == 403
    ex.refresh_from_db()
    assert "$247.83" in ex.clause_text  # a clause changes only through a reviewer's correction, which is kept
    assert (
        client.post(reverse("admin:extraction_extraction_delete", args=[ex.pk]), {"post": "yes"}).status_code
        == 403
    )


@pytest.mark.django_db
def test_the_django_admin_cannot_move_a_document_or_its_pages(client, engagement, django_user_model):
    from engagements.models import Engagement
    from ingest.models import Page

    contract = make_reviewable(engagement)
    doc, other = contract.document, Engagement.objects.create(name="Another client")
    client.force_login(django_user_model.objects.create_superuser("root", password="x-long-password-1"))
    url = reverse("admin:ingest_document_change", args=[doc.pk])
    assert client.get(url).status_code == 200
    stages = {f"stages-{k}": v for k, v in {"TOTAL_FORMS": 0, "INITIAL_FORMS": 0}.items()}
    saved = client.post(
        url, {"title": "Renamed", "engagement": other.pk, "original_name": "other.pdf", **stages}
    )
    assert saved.status_code == 302  # the form was taken: the title is still the admin's to change
    doc.refresh_from_db()
    assert doc.title == "Renamed"
    assert (doc.engagement_id, doc.original_name) == (engagement.pk, contract.document.original_name)
    assert client.get(reverse("admin:ingest_document_add")).status_code == 403  # documents enter by upload
    page = Page.objects.filter(document=doc).first()
    page_url = reverse("admin:ingest_page_change", args=[page.pk])
    assert (
        client.post(page_url, {"document": doc.pk, "number": 1, "char_start": 5, "char_end": 9}).status_code
        == 403
    )
    page_before = (page.char_start, page.char_end)
    page.refresh_from_db()
    assert (page.char_start, page.char_end) == page_before  # pages place every verified citation


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


@pytest.mark.django_db
def test_the_django_admin_shows_the_catalog_but_changes_it_only_through_the_catalog_page(
    client, django_user_model
):
    # the catalog page checks names, keeps built-in names and keeps every edit; the admin would bypass all three
    law = ClauseType.objects.get(name="Governing Law")
    client.force_login(django_user_model.objects.create_superuser("root", password="x-long-password-1"))
    url = reverse("admin:extraction_clausetype_change", args=[law.pk])
    assert client.get(url).status_code == 200  # still readable
    response = client.post(
        url,
        {
            "name": "Choice of Law",
            "slug": "choice-of-law",
            "source": "custom",
            "description": "Which law governs the contract.",
            "query": "governed by the laws of",
            "example": law.example,
            "kind": "value",
            "active": "on",
        },
    )
    assert response.status_code == 403
    law.refresh_from_db()
    assert (law.name, law.slug, law.source) == ("Governing Law", "governing-law", "cuad")
    assert client.get(reverse("admin:extraction_clausetype_add")).status_code == 403  # a "q-" slug hid a type
    assert (
        client.post(reverse("admin:extraction_clausetype_delete", args=[law.pk]), {"post": "yes"}).status_code
        == 403
    )


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["governing law", "Governing  Law", "GOVERNING-LAW", "governing_law"])
def test_a_catalog_name_again_in_other_capitals_or_spacing_is_refused(client, django_user_model, name):
    client.force_login(django_user_model.objects.create_superuser("root", password="pw-long-1"))
    response = client.post(
        reverse("catalog"),
        {
            "name": name,
            "description": "Which law governs.",
            "query": "governed by the laws of",
            "kind": "value",
        },
    )
    assert response.status_code == 422
    assert "“Governing Law” is already in the catalog" in response.content.decode()
    assert ClauseType.objects.filter(name__iexact="governing law").count() == 1  # one type, run once
    kept = {"name": "Données personnelles", "description": "d", "query": "q", "kind": "text"}
    assert client.post(reverse("catalog"), kept).status_code == 302  # a new name in any script is welcome
    assert client.post(reverse("catalog"), {**kept, "name": "données  PERSONNELLES"}).status_code == 422
    assert client.post(reverse("catalog"), {**kept, "name": "保密条款"}).status_code == 302
    assert client.post(reverse("catalog"), {**kept, "name": "竞业禁止"}).status_code == 302


@pytest.mark.django_db
def test_adding_a_member_proposes_auditor_not_admin(client, engagement, make_member):
    client.force_login(make_member(engagement, "admin"))
    page = client.get(reverse("engagement-members", args=[engagement.pk])).content.decode()
    add_role = page[page.index('id="id_role"') :]
    add_role = add_role[: add_role.index("</select>")]
    assert '<option value="auditor" selected>' in add_role  # typing a name and pressing Enter makes no admin
    assert "selected" not in add_role.replace('<option value="auditor" selected>', "")


@pytest.mark.django_db
def test_each_members_buttons_name_the_member(client, engagement, make_member):
    # a screen reader that lists a page's buttons read "Change, Remove, Change, Remove": whose?
    client.force_login(make_member(engagement, "admin", username="ada"))
    make_member(engagement, "auditor", username="alice")
    page = client.get(reverse("engagement-members", args=[engagement.pk])).content.decode()
    for name in ("ada", "alice"):
        row = page[page.index(f'data-member="{name}"') :]
        row = row[: row.index("</tr>")]
        assert f'aria-label="Change the role of {name}">Change</button>' in row
        assert f'aria-label="Remove {name}">Remove</button>' in row


@pytest.mark.django_db
def test_a_question_too_long_to_ask_is_refused_in_words_that_say_so(client, engagement, make_member):
    contract = make_reviewable(engagement)
    client.force_login(make_member(engagement, "auditor"))
    url = reverse("find", args=[contract.document.pk])
    before = Extraction.objects.count()
    question = "Does the supplier indemnify the customer against " + "third-party claims, " * 60 + "and how?"

    refused = client.post(url, {"question": question}, **HX)

    html = refused.content.decode()
    assert refused.status_code == 422 and f"this one has {len(question)})" in html
    assert "A question has at most 1000 characters" in html and "Pick a clause type" not in html
    assert question in html  # kept in the box to be shortened, not lost
    assert Extraction.objects.count() == before


@pytest.mark.django_db
@pytest.mark.parametrize("question", ["???", "... !!", "-- * --"])
def test_a_question_without_a_word_is_refused_not_answered_not_found(
    client, engagement, make_member, question
):
    from extraction.models import ExtractionRun

    contract = make_reviewable(engagement)
    client.force_login(make_member(engagement, "auditor"))
    runs = ExtractionRun.objects.count()

    refused = client.post(reverse("find", args=[contract.document.pk]), {"question": question}, **HX)

    assert refused.status_code == 422 and "The question has no words" in refused.content.decode()
    assert (
        ExtractionRun.objects.count() == runs
        and not ClauseType.objects.filter(name=f"Q: {question}").exists()
    )
