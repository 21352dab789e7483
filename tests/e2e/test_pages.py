"""The other pages in Chromium: live document table, find a clause, no-JS reading path, admin pages."""

from __future__ import annotations

import pytest
from django.urls import reverse

from extraction.models import ClauseType, Extraction
from ingest.models import Document
from reviewer.models import Review
from tests.factories import make_document, make_reviewable

pytestmark = pytest.mark.django_db(transaction=True)


def test_documents_table_updates_itself_until_every_document_is_done(signed_in, engagement, make_member):
    make_reviewable(engagement)
    busy, _, _ = make_document(
        engagement, title="Supply Agreement (converting)", seed=2, status="embedding", progress=40
    )
    make_document(engagement, title="Scanned lease", seed=3, status="needs_ocr")
    make_document(
        engagement,
        title="Encrypted NDA",
        seed=4,
        status="failed",
        error="The PDF is password-protected; upload an unlocked copy.",
    )
    s = signed_in(make_member(engagement, "manager", username="mona"))
    s.page.goto(reverse("engagement", args=[engagement.pk]))
    row = s.page.locator(f'tr[data-document-id="{busy.pk}"]')
    assert row.locator("progress").get_attribute("value") == "40"
    assert "password-protected" in s.page.locator("#documents").text_content()
    s.shot("12-engagement-documents")
    Document.objects.filter(pk=busy.pk).update(progress=80)
    s.page.wait_for_function(
        f"() => document.querySelector('tr[data-document-id=\"{busy.pk}\"] progress')?.value == 80"
    )
    Document.objects.filter(pk=busy.pk).update(status="ready", progress=100)
    s.page.wait_for_selector(f'tr[data-document-id="{busy.pk}"][data-status="ready"]')
    assert s.page.locator("#documents").get_attribute("data-polling") == "false"
    assert s.page.locator("#documents").get_attribute("hx-trigger") is None  # polling stopped


def test_a_documents_table_that_refreshes_itself_keeps_the_keyboard_focus(signed_in, engagement, make_member):
    ready = make_reviewable(engagement).document
    busy, _, _ = make_document(
        engagement, title="Supply Agreement (converting)", seed=2, status="embedding", progress=40
    )
    s = signed_in(make_member(engagement, "auditor", username="alice"))
    s.page.goto(reverse("engagement", args=[engagement.pk]))
    href = reverse("document", args=[ready.pk])
    s.page.focus(f'#documents a[href="{href}"]')  # tabbed to, about to open it
    Document.objects.filter(pk=busy.pk).update(progress=80)
    s.page.wait_for_function(
        f"() => document.querySelector('tr[data-document-id=\"{busy.pk}\"] progress')?.value == 80"
    )
    # the table was replaced by its refresh: the focus is on the same link, not back at the page's top
    s.page.wait_for_function(
        f"() => document.activeElement?.getAttribute('href') === '{href}'", timeout=2_000
    )
    with s.page.expect_navigation():
        s.page.keyboard.press("Enter")
    assert s.page.url.endswith(href)


def test_find_a_clause_by_catalog_type_and_by_question(signed_in, engagement, make_member):
    contract = make_reviewable(engagement)
    ClauseType.objects.filter(name="Governing Law").update(active=True)
    s = signed_in(make_member(engagement, "auditor", username="alice"))
    s.page.goto(reverse("document", args=[contract.document.pk]))
    before = Extraction.objects.count()
    s.page.select_option("#find-type", label="Governing Law")
    s.page.click("#find-form button[type=submit]")
    s.page.wait_for_function(
        f"() => document.querySelectorAll('#clause-list [data-extraction-id]').length > {before}"
    )
    found = Extraction.objects.latest("id")
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{found.pk}"]')
    cit = found.citations.first()
    assert s.page.locator(f'mark[data-citation-id="{cit.pk}"]').text_content() == cit.quote
    assert found.clause_type.name == "Governing Law"  # what the engine picked is the engine's business
    assert s.page.locator(f'mark[data-citation-id="{cit.pk}"]').evaluate(
        "m => m.closest('[data-page]').dataset.page"
    ) == str(cit.page)
    assert s.page.url.endswith(reverse("clause", args=[found.document_id, found.pk]))
    s.page.select_option("#find-type", value="")
    s.page.keyboard.press("Escape")
    s.page.locator("body").press("/")
    s.page.keyboard.type("What unit fee does the customer pay?")
    s.page.keyboard.press("Enter")
    s.page.wait_for_function(
        f"() => document.querySelectorAll('#clause-list [data-extraction-id]').length > {before + 1}"
    )
    answer = Extraction.objects.latest("id")
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{answer.pk}"]')
    assert answer.clause_type.name.startswith("Q: What unit fee")
    s.shot("13-find-question")
    # the clause found has the focus: a key decides it; "/" then starts a new question, not a longer one
    s.page.wait_for_function(f"() => document.activeElement?.dataset.extractionId === '{answer.pk}'")
    s.page.keyboard.press("a")
    s.page.wait_for_function(
        f"() => document.querySelector('#clause-item-{answer.pk}')?.dataset.review === 'accept'"
        f" && document.activeElement === document.querySelector('#clause-item-{answer.pk} a')"
    )
    s.page.keyboard.press("/")
    s.page.keyboard.type("Which law governs?")
    assert s.page.input_value("#find-question") == "Which law governs?"
    s.page.keyboard.press("Escape")
    # both at once is refused in words, in the find box
    s.page.select_option("#find-type", label="Governing Law")
    s.page.fill("#find-question", "and a question")
    s.page.click("#find-form button[type=submit]")
    s.page.wait_for_selector("#find-form .error")
    assert "not both" in s.page.locator("#find-form .error").text_content()


def test_reading_and_deciding_work_without_javascript(signed_in, engagement, make_member):
    contract = make_reviewable(engagement)
    s = signed_in(make_member(engagement, "auditor", username="alice"), js=False)
    ex, cit = contract.extractions["Governing Law"], contract.citations["Governing Law"][0]
    s.page.goto(reverse("document", args=[contract.document.pk]))
    s.page.click(f'[data-extraction-id="{ex.pk}"]')  # a plain link: a full page load
    s.page.wait_for_url(f"**{reverse('clause', args=[ex.document_id, ex.pk])}")
    assert s.page.locator(f'mark[data-citation-id="{cit.pk}"]').text_content() == cit.quote
    s.page.click('[data-nav="next-page"]')
    s.page.wait_for_selector(f'.page[data-page="{cit.page + 1}"]')
    s.page.go_back()
    s.page.fill("#decision-reason", "checked against the signed copy")
    s.page.click('#decision-form button[data-action="accept"]')
    s.page.wait_for_selector(".msg.success")
    assert "Recorded: accept." in s.page.locator(".messages").text_content()
    assert s.page.locator(f"#clause-item-{ex.pk} .chip.review-accept").count() == 1
    assert Review.objects.get(extraction=ex).reason == "checked against the signed copy"
    s.shot("14-no-javascript")


def test_admin_pages_members_and_catalog(signed_in, engagement, make_member, django_user_model):
    admin = make_member(engagement, "admin", username="ada")
    django_user_model.objects.create_user(username="newbie", password="x-long-password-1")
    s = signed_in(admin)
    s.page.goto(reverse("engagement-members", args=[engagement.pk]))
    s.page.fill("#id_username", "newbie")
    s.page.select_option("#id_role", "auditor")
    s.page.click("#add-member")
    s.page.wait_for_selector('tr[data-member="newbie"]')
    s.page.select_option('tr[data-member="ada"] select', "auditor")
    s.page.click('tr[data-member="ada"] button:has-text("Change")')
    assert "at least one admin" in s.page.locator(".messages").text_content()
    s.shot("15-members")
    s.page.goto(reverse("engagement-catalog", args=[engagement.pk]))  # an admin's own type: this engagement's
    s.page.fill("#id_name", "Data Protection")
    s.page.fill("#id_description", "Processing of personal data, GDPR, data processing agreement terms.")
    s.page.fill("#id_query", "personal data processing GDPR controller processor")
    s.page.click("#add-clause-type")
    s.page.wait_for_selector("text=Added clause type Data Protection to Acme audit 2026.")
    added = ClauseType.objects.get(name="Data Protection")
    assert (added.source, added.engagement) == ("custom", engagement)
    s.shot("16-catalog", full_page=False)


def test_case_summary_from_the_document_page_by_keyboard(signed_in, engagement, make_member):
    contract = make_reviewable(engagement)
    s = signed_in(make_member(engagement, "auditor", username="alice"))
    s.page.goto(reverse("document", args=[contract.document.pk]))
    s.page.get_by_role("link", name="Summary", exact=True).focus()
    s.page.keyboard.press("Enter")
    s.page.wait_for_url(f"**{reverse('document-summary', args=[contract.document.pk])}")
    s.page.get_by_role("button", name="Summarise now").focus()
    with s.page.expect_navigation():
        s.page.keyboard.press("Enter")
    assert "every value found in the document" in s.page.locator(".messages").text_content()
    topics = s.page.locator(".summary-points h3").all_text_contents()
    assert topics == ["Termination", "Money", "Liability", "Governing law"]
    assert "a unit fee of $247.83 per processed record" in s.page.locator(".summary-points").text_content()
    s.shot("17-case-summary", full_page=True)
    payment, cit = contract.extractions["Payment"], contract.citations["Payment"][0]
    s.page.get_by_role("link", name="Payment", exact=True).click()
    s.page.wait_for_url(f"**{reverse('clause', args=[contract.document.pk, payment.pk])}")
    assert s.page.locator(f'mark[data-citation-id="{cit.pk}"]').text_content() == cit.quote


def test_the_clause_list_fills_in_while_clauses_are_being_extracted(signed_in, engagement, make_member):
    from extraction.launch import create_run
    from extraction.models import ClauseTask
    from tests.factories import ensure_clause_types

    document, _, _ = make_document(engagement)
    types = ensure_clause_types(["Governing Law", "Payment"])
    run = create_run(engagement, documents=[document], clause_types=list(types.values()), enqueue=False)
    s = signed_in(make_member(engagement, "auditor", username="alice"))
    s.page.goto(reverse("document", args=[document.pk]))
    assert "Extracting: 2 clause types to go" in s.page.locator("#clause-list").text_content()

    Extraction.objects.create(
        run=run,
        document=document,
        clause_type=types["Governing Law"],
        status="not_found",
        engine="offline",
        dedupe_key="not_found",
    )
    ClauseTask.objects.filter(run=run, clause_type=types["Governing Law"]).update(status="done")
    s.page.wait_for_selector("#clause-list [data-extraction-id]", timeout=10_000)  # no reload
    assert "1 clause type to go" in s.page.locator("#clause-list").text_content()
    s.page.locator("body").press("j")  # reviewing may start at once; the next refresh keeps the focus
    s.page.wait_for_selector("#workspace [data-current-extraction]")
    ClauseTask.objects.filter(run=run).update(status="done")
    s.page.wait_for_function(
        "() => !document.querySelector('#clause-list').hasAttribute('hx-trigger')", timeout=10_000
    )
    s.settle()
    assert "Extracting" not in s.page.locator("#clause-list").text_content()
    clause = Extraction.objects.get(run=run).pk  # still in hand, and focused, after the list was replaced
    s.page.wait_for_function(
        f"() => document.activeElement.dataset.extractionId === '{clause}'", timeout=2_000
    )


def test_an_upload_the_server_refuses_says_so(signed_in, engagement, make_member, tmp_path):
    doc = tmp_path / "terms.md"
    doc.write_text("# Terms\n\nThe fee is $247.83.\n")
    s = signed_in(make_member(engagement, "admin", username="ada"))
    s.page.goto(f"/engagements/{engagement.pk}/upload/")
    assert "up to 200 files at once" in s.page.text_content("main")
    s.page.route(
        "**/upload/",
        lambda route: (
            route.fulfill(status=400, body="Bad Request")
            if route.request.method == "POST"
            else route.continue_()
        ),
    )
    s.page.set_input_files("#upload-files", [str(doc)])
    s.page.click("#upload-form button[type=submit]")
    alert = s.page.locator('#upload-form [role="alert"]')
    alert.wait_for()
    assert alert.text_content().startswith(
        "Nothing was uploaded: the server refused it (400): too many files"
    )
    s.errors[:] = [e for e in s.errors if "400" not in e and "Response Status Error" not in e]


def test_an_upload_says_in_a_status_line_what_was_taken(signed_in, engagement, make_member, tmp_path):
    good, bad = tmp_path / "terms.md", tmp_path / "not-really.pdf"
    good.write_text("# Terms\n\nThe fee is $247.83.\n")
    bad.write_text("This is a plain text file that claims to be a PDF.\n")
    s = signed_in(make_member(engagement, "admin", username="ada"))
    s.page.goto(f"/engagements/{engagement.pk}/upload/")
    status = s.page.locator('[role="status"]#upload-status')
    status.evaluate("el => { el.dataset.before = 'yes'; }")  # a live region is read out when it changes,
    s.page.set_input_files("#upload-files", [str(good), str(bad)])  # not when it is put in the page new
    s.page.click("#upload-form button[type=submit]")
    s.page.locator('.file-result[data-filename="not-really.pdf"]').wait_for()
    s.page.wait_for_function("() => document.getElementById('upload-status').textContent.trim() !== ''")
    assert status.text_content() == "1 of 2 files taken, 1 refused: the results are listed below."
    assert status.get_attribute("data-before") == "yes"  # the same region, not a new one
    s.errors[:] = [e for e in s.errors if "422" not in e]


def test_a_polling_panel_that_is_no_longer_allowed_stops_and_says_so(signed_in, engagement, make_member):
    make_document(engagement, title="Still converting", status="converting")
    s = signed_in(make_member(engagement, "auditor"))
    s.page.goto(f"/engagements/{engagement.pk}/")
    s.page.locator('#documents[hx-trigger="every 2s"]').wait_for()
    asked = []

    def gone(route):
        asked.append(1)
        route.fulfill(status=404, body="Not found")

    s.page.route("**/documents/", gone)  # as after an admin removed this member
    alert = s.page.locator('[role="alert"]:has-text("no longer available to you")')
    alert.wait_for()
    s.page.wait_for_timeout(5000)
    assert len(asked) == 1  # asked once, then stopped
    s.errors[:] = [e for e in s.errors if "404" not in e and "Response Status Error" not in e]


def test_an_admin_deletes_a_wrongly_uploaded_document_by_keyboard(signed_in, engagement, make_member):
    kept, wrong = make_reviewable(engagement), make_reviewable(engagement, title="Wrong Upload", seed=1)
    s = signed_in(make_member(engagement, "admin", username="ada"))
    s.page.goto(reverse("document", args=[wrong.document.pk]))
    s.page.get_by_text("Delete this document", exact=True).focus()
    s.page.keyboard.press("Enter")  # opens the confirmation: the document named, and what goes with it
    told = s.page.locator("#delete-document-what")
    assert told.is_visible() and "“Wrong Upload” also deletes its 6 pages" in told.text_content()
    s.page.keyboard.press("Tab")
    button = s.page.get_by_role("button", name="Delete “Wrong Upload”")
    assert button.evaluate("b => b === document.activeElement")
    s.shot("18-delete-document")
    with s.page.expect_navigation():
        s.page.keyboard.press("Enter")
    assert s.page.url.endswith(reverse("engagement", args=[engagement.pk]))
    assert "Deleted “Wrong Upload”" in s.page.locator(".messages").text_content()
    assert "Wrong Upload" not in s.page.locator("table").text_content()
    assert list(Document.objects.values_list("pk", flat=True)) == [kept.document.pk]
