"""An auditor reviews clauses in Chromium: the cited span on its page, decisions, history, keyboard."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from reviewer.models import Review
from tests.e2e.conftest import AA, FOCUS, contrast, focus_ring_contrast

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def auditor(engagement, make_member):
    return make_member(engagement, "auditor", username="alice")


def open_document(s, contract):
    s.page.goto(reverse("document", args=[contract.document.pk]))
    s.page.wait_for_selector("#clause-list [data-extraction-id]")


def open_first_listed(s) -> tuple[int, int]:
    """Open the first clause the list shows with "j", once htmx has pushed its address ("j" is done);
    the ids of the first two shown."""
    first, second = [
        int(x)
        for x in s.page.locator("#clause-list .clause-link:visible").evaluate_all(
            "links => links.map(a => a.dataset.extractionId)"
        )
    ][:2]
    s.page.locator("body").press("j")
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{first}"]')
    s.page.wait_for_url(f"**/clauses/{first}/**")
    s.settle()
    return first, second


def click_clause(s, ex):
    s.page.click(f'#clause-list [data-extraction-id="{ex.pk}"]')
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{ex.pk}"]')
    s.settle()


def test_clicking_a_clause_highlights_the_exact_quote_on_the_cited_page(signed_in, auditor, contract):
    s = signed_in(auditor)
    open_document(s, contract)
    s.shot("01-document-review")
    for name in ("Governing Law", "Payment", "Other"):
        ex, cit = contract.extractions[name], contract.citations[name][0]
        click_clause(s, ex)
        mark = s.page.locator(f'mark[data-citation-id="{cit.pk}"]')
        assert mark.count() == 1
        assert mark.text_content() == cit.quote
        page_number = mark.evaluate("m => m.closest('[data-page]').getAttribute('data-page')")
        assert int(page_number) == cit.page
        assert mark.is_visible()
        assert s.page.url.endswith(reverse("clause", args=[ex.document_id, ex.pk]))  # shareable (pushed) URL
        link = s.page.locator(f'#clause-list [data-extraction-id="{ex.pk}"]')
        assert link.get_attribute("aria-current") == "true"
    # the contract's HTML is shown as text, never run or rendered
    assert "<script>" in s.page.locator("mark").first.text_content()
    assert s.page.locator("#workspace b, #workspace script").count() == 0
    s.shot("02-clause-with-html-in-contract")
    ex = contract.extractions["Governing Law"]
    click_clause(s, ex)
    s.shot("03-clause-selected")
    # the shared URL opens the same state without any click
    s.page.goto(s.page.url)
    cit = contract.citations["Governing Law"][0]
    assert s.page.locator(f'mark[data-citation-id="{cit.pk}"]').text_content() == cit.quote


def test_next_citation_and_page_navigation(signed_in, auditor, contract):
    s = signed_in(auditor)
    ex = contract.extractions["Cap On Liability"]
    first, second = contract.citations["Cap On Liability"]
    s.page.goto(reverse("clause", args=[ex.document_id, ex.pk]))
    assert s.page.locator(f'mark[data-citation-id="{first.pk}"]').text_content() == first.quote
    s.page.click('[data-nav="next-citation"]')
    s.page.wait_for_selector(f'mark[data-citation-id="{second.pk}"]')
    assert s.page.locator("[data-page]").first.get_attribute("data-page") == str(second.page)
    assert s.page.url.endswith(reverse("citation", args=[ex.document_id, ex.pk, second.pk]))
    s.page.click('[data-nav="next-page"]')
    s.page.wait_for_selector(f'.page[data-page="{second.page + 1}"]')
    s.page.fill(".page-input", "2")
    s.page.press(".page-input", "Enter")
    s.page.wait_for_selector('.page[data-page="2"]')
    assert s.page.url.endswith(reverse("clause-page", args=[ex.document_id, ex.pk, 2]))
    s.page.go_back()
    s.page.wait_for_selector(f'.page[data-page="{second.page + 1}"]')


def test_accept_reject_correct_round_trip_with_history(signed_in, auditor, contract):
    s = signed_in(auditor)
    ex = contract.extractions["Payment"]
    open_document(s, contract)
    click_clause(s, ex)
    item = s.page.locator(f"#clause-item-{ex.pk}")

    s.page.click('#decision-form button[data-action="accept"]')
    s.page.wait_for_selector("#decision-saved")
    assert item.locator(".chip.review-accept").text_content() == "accepted"

    s.page.fill("#decision-reason", "fee belongs to Schedule A, not 4.2")
    s.page.click('#decision-form button[data-action="reject"]')
    s.page.wait_for_selector('[data-review-state="reject"]')
    assert item.locator(".chip.review-reject").text_content() == "rejected"

    s.page.click("#correct-box summary")
    s.page.fill("#decision-corrected", "a unit fee of $247.83 per processed record (Schedule A)")
    s.page.fill("#decision-reason", "add the schedule reference")
    s.page.click('#decision-form button[data-action="correct"]')
    s.page.wait_for_selector('[data-review-state="correct"]')
    assert "(Schedule A)" in s.page.locator("#clause-text").text_content()
    assert "(Schedule A)" in item.text_content()
    s.shot("04-decision-history")

    rows = list(
        Review.objects.filter(extraction=ex).order_by("id").values_list("decision", "extraction_version")
    )
    assert rows == [("accept", 1), ("reject", 1), ("correct", 1)]
    # the history survives a reload (it is read back from the rows)
    s.page.reload()
    history = s.page.locator(".history-item")
    assert history.count() == 3
    assert [history.nth(i).get_attribute("data-decision") for i in range(3)] == [
        "correct",
        "reject",
        "accept",
    ]
    assert "fee belongs to Schedule A" in s.page.locator(".history").text_content()
    assert "alice" in history.first.text_content()


def test_keyboard_flow(signed_in, auditor, contract):
    s = signed_in(auditor)
    open_document(s, contract)
    links = s.page.locator("#clause-list .clause-link")
    ids = [int(links.nth(i).get_attribute("data-extraction-id")) for i in range(links.count())]
    s.page.locator("body").press("j")
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{ids[0]}"]')
    s.page.keyboard.press("j")
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{ids[1]}"]')
    focused = s.page.evaluate(
        "() => [document.activeElement.dataset.extractionId, document.activeElement.matches(':focus-visible')]"
    )
    assert focused == [str(ids[1]), True]
    outline = s.page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"  # focus is visible
    s.shot("05-keyboard-focus")
    s.page.keyboard.press("k")
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{ids[0]}"]')
    current = ids[0]

    s.page.keyboard.press("a")
    s.page.wait_for_selector('[data-review-state="accept"]')
    s.settle()
    s.page.keyboard.press("r")
    assert s.page.evaluate("() => document.activeElement.id") == "decision-reason"
    s.page.keyboard.type("wrong party")
    s.page.keyboard.press("Enter")
    s.page.wait_for_selector('[data-review-state="reject"]')
    s.settle()
    assert s.page.evaluate("() => document.activeElement.dataset.extractionId") == str(current)
    s.page.keyboard.press("e")
    assert s.page.evaluate("() => document.activeElement.id") == "decision-corrected"
    s.page.keyboard.type(" (as amended)")
    s.page.keyboard.press("Control+Enter")
    s.page.wait_for_selector('[data-review-state="correct"]')
    s.settle()
    s.page.keyboard.press("r")
    s.page.keyboard.type("amended wrongly")
    s.page.keyboard.press("Control+Enter")  # as in the correction box
    s.page.wait_for_selector('[data-review-state="reject"]')
    s.settle()
    decisions = list(
        Review.objects.filter(extraction_id=current).order_by("id").values_list("decision", "reason")
    )
    assert decisions == [
        ("accept", ""),
        ("reject", "wrong party"),
        ("correct", ""),
        ("reject", "amended wrongly"),
    ]
    s.page.keyboard.press("/")
    assert s.page.evaluate("() => document.activeElement.id") == "find-question"
    s.page.keyboard.press("Escape")
    s.page.keyboard.press("j")
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{ids[1]}"]')


def test_decision_buttons_are_named_by_their_action_and_announce_their_key(signed_in, auditor, contract):
    """A screen reader says "Accept", not "Accept a"; the key is told as a shortcut (aria-keyshortcuts)."""
    s = signed_in(auditor)
    ex = contract.extractions["Cap On Liability"]
    s.page.goto(reverse("clause", args=[ex.document_id, ex.pk]))
    s.page.wait_for_selector("#decision-form")
    form = s.page.locator("#decision-form")
    for name, key in [("Accept", "a"), ("Reject", "r"), ("Not in this contract", "n")]:
        button = form.get_by_role("button", name=name, exact=True)
        assert button.count() == 1, name
        assert button.get_attribute("aria-keyshortcuts") == key
    assert form.locator("summary").get_attribute("aria-keyshortcuts") == "e"
    assert form.locator("summary kbd").get_attribute("aria-hidden") == "true"


def test_n_marks_a_clause_not_in_this_contract(signed_in, auditor, contract):
    s = signed_in(auditor)
    open_document(s, contract)
    ex = contract.extractions["Governing Law"]
    s.page.locator(f'#clause-list .clause-link[data-extraction-id="{ex.pk}"]').click()
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{ex.pk}"]')
    s.settle()
    s.page.locator("body").press("n")
    s.page.wait_for_selector('[data-review-state="correct"]')
    assert s.page.locator("#clause-text").inner_text() == "Not found: marked not in this contract by review."
    assert s.page.locator('#decision-form button[data-action="absent"]').count() == 0
    assert list(Review.objects.filter(extraction=ex).values_list("decision", "corrected_text")) == [
        ("correct", "not_found")
    ]


def test_stale_decision_is_refused_in_the_browser(signed_in, auditor, contract, engagement, make_member):
    bob = make_member(engagement, "auditor", username="bob")
    ex = contract.extractions["Governing Law"]
    url = reverse("clause", args=[ex.document_id, ex.pk])
    a, b = signed_in(auditor), signed_in(bob)
    a.page.goto(url)
    b.page.goto(url)
    b.page.fill("#decision-reason", "this is Delaware, but the clause is in the wrong section")
    b.page.click('#decision-form button[data-action="reject"]')
    b.page.wait_for_selector('[data-review-state="reject"]')
    a.page.click('#decision-form button[data-action="accept"]')  # alice still sees the unreviewed clause
    a.page.wait_for_selector("#decision-error")
    message = a.page.locator("#decision-error").text_content()
    assert re.search(r"Not saved: bob recorded “rejected”", message)
    assert a.page.locator('[data-review-state="reject"]').count() == 1
    assert a.page.locator(".history-item").count() == 1
    a.shot("06-stale-decision-refused")
    assert list(Review.objects.filter(extraction=ex).values_list("reviewer__username", "decision")) == [
        ("bob", "reject")
    ]
    a.page.click('#decision-form button[data-action="accept"]')  # deciding again, knowingly, works
    a.page.wait_for_selector('[data-review-state="accept"]')
    assert Review.objects.filter(extraction=ex).count() == 2


def test_filter_not_reviewed_is_a_work_queue_that_j_walks_and_a_reload_keeps(signed_in, auditor, contract):
    s = signed_in(auditor)
    open_document(s, contract)
    bar = s.page.locator("#clause-filter")
    assert bar.locator('[data-show="all"] .n').text_content() == "7"
    assert bar.locator('[data-show="unverified"] .n').text_content() == "1"
    bar.locator('[data-show="unverified"]').click()
    visible = s.page.locator("#clause-list .clause-link:visible")
    assert visible.count() == 1
    assert visible.get_attribute("data-extraction-id") == str(contract.extractions["Insurance"].pk)
    assert s.page.locator("#clause-list .group-title:visible").all_text_contents() == ["Insurance 1"]

    bar.locator('[data-show="pending"]').click()
    assert bar.locator('[data-show="pending"]').get_attribute("aria-pressed") == "true"
    order = [int(x) for x in visible.evaluate_all("links => links.map(a => a.dataset.extractionId)")]
    assert len(order) == 7
    s.page.locator("body").press("j")  # the first clause
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{order[0]}"]')
    s.page.wait_for_url(f"**/clauses/{order[0]}/**")  # htmx has pushed the clause's address: "j" is done
    s.settle()
    s.page.keyboard.press("a")  # accepted: it leaves the queue, the count follows
    s.page.wait_for_function(
        "() => document.querySelector('#clause-filter [data-show=\"pending\"] .n').textContent === '6'"
    )
    assert visible.count() == 6
    s.page.keyboard.press("j")  # the next one still to review
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{order[1]}"]')
    assert Review.objects.filter(extraction_id=order[0], decision="accept").count() == 1
    s.shot("18-filter-not-reviewed")

    s.page.reload()
    assert bar.locator('[data-show="pending"]').get_attribute("aria-pressed") == "true"
    assert visible.count() == 6


def test_a_decision_that_leaves_the_not_reviewed_queue_keeps_the_focus_on_the_page(
    signed_in, auditor, contract
):
    s = signed_in(auditor)
    open_document(s, contract)
    s.page.locator('#clause-filter [data-show="pending"]').click()
    first, second = open_first_listed(s)
    s.page.keyboard.press("a")  # the clause leaves the queue: its link is hidden, so it cannot hold the focus
    s.page.wait_for_selector("#decision-saved")
    s.settle()
    focused = s.page.evaluate("() => [document.activeElement.id, document.activeElement.tagName]")
    assert focused == ["decision-saved", "DIV"]  # not the page body, where Tab would start again from the top
    s.page.keyboard.press("Tab")  # the decision's own controls come next
    assert s.page.evaluate("() => document.activeElement.id") == "decision-reason"
    s.page.keyboard.press("Escape")  # out of the reason box: back to the page, not to its body
    assert s.page.evaluate("() => document.activeElement.id") == "decision-saved"
    s.page.keyboard.press("j")  # and the queue goes on from the clause just decided
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{second}"]')


def test_a_decision_key_pressed_while_the_next_clause_opens_records_nothing_and_says_so(
    signed_in, auditor, contract
):
    s = signed_in(auditor)
    open_document(s, contract)
    first, second = open_first_listed(s)
    held = []  # the second clause's view is held back, as on a slow network
    s.page.route(f"**/clauses/{second}/**", lambda route: held.append(route))
    s.page.keyboard.press("j")
    for _ in range(50):
        if held:
            break
        s.page.wait_for_timeout(50)
    assert held, "the second clause was never asked for"
    s.page.keyboard.press("a")  # the first clause's form is still on screen: it must not take this
    accept = s.page.locator('#decision-form button[data-action="accept"]')
    expect(accept).to_be_disabled()  # nor a click on it
    s.page.wait_for_timeout(300)
    assert not Review.objects.filter(extraction_id__in=[first, second]).exists()
    held[0].continue_()
    s.page.unroute(f"**/clauses/{second}/**")
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{second}"]')
    note = s.page.locator("#decision-held")
    expect(note).to_contain_text("Nothing recorded")
    assert not Review.objects.filter(extraction_id__in=[first, second]).exists()
    s.shot("18b-key-held-while-opening")
    s.settle()
    s.page.keyboard.press("a")  # now on the clause shown
    s.page.wait_for_selector("#decision-saved")
    assert list(
        Review.objects.filter(extraction_id__in=[first, second]).values_list("extraction_id", "decision")
    ) == [(second, "accept")]


def test_a_group_counts_the_clauses_its_filter_shows(signed_in, auditor, contract):
    from extraction.models import Extraction

    law = contract.extractions["Governing Law"]
    Extraction.objects.create(
        run=law.run,
        document=law.document,
        clause_type=law.clause_type,
        status="not_found",
        engine="offline",
        dedupe_key="not_found",
    )
    s = signed_in(auditor)
    open_document(s, contract)
    titles = s.page.locator("#clause-list .group-title:visible")
    assert "Governing Law 2" in titles.all_text_contents()
    s.page.locator('#clause-filter [data-show="found"]').click()
    assert "Governing Law 1" in titles.all_text_contents()


# What the browser logs for the failures the next test provokes on purpose.
PROVOKED = (
    "Response Status Error Code",
    "status of 500",
    "ERR_FAILED",
    "htmx:afterRequest",
    "htmx:sendError",
)


def _answer(status):
    """A route handler that answers with ``status`` (None: the connection fails)."""
    return lambda route: (
        route.abort() if status is None else route.fulfill(status=status, body="<h1>nope</h1>")
    )


def test_a_decision_or_find_the_server_never_took_says_so_and_keeps_what_was_typed(
    signed_in, auditor, contract
):
    s = signed_in(auditor)
    ex = contract.extractions["Payment"]
    s.page.goto(reverse("clause", args=[ex.document_id, ex.pk]))
    decide = reverse("decide", args=[ex.document_id, ex.pk])
    # 403: a stale CSRF token after signing in again in another tab; 404, 500; None: no network
    for status in (403, 404, 500, None):
        s.page.unroute("**" + decide)
        s.page.route("**" + decide, _answer(status))
        s.page.fill("#decision-reason", f"wrong party ({status})")
        s.page.click('#decision-form button[data-action="reject"]')
        alert = s.page.locator('.decision-pane [role="alert"]')
        alert.wait_for()
        text = alert.text_content()
        assert text.startswith("Not saved") and "Reload the page and try again." in text, text
        assert s.page.input_value("#decision-reason") == f"wrong party ({status})"  # what was typed is kept
        assert s.page.locator('[data-review-state="pending"]').count() == 1
        s.page.evaluate(
            "() => document.querySelectorAll('.decision-pane [role=alert]').forEach(a => a.remove())"
        )
    assert alert.count() == 0 and not Review.objects.exists()

    find = reverse("find", args=[ex.document_id])
    s.page.route("**" + find, lambda r: r.fulfill(status=500, body="boom"))
    s.page.fill("#find-question", "Who pays the unit fee?")
    s.page.click("#find-form button[type=submit]")
    alert = s.page.locator('#find-form [role="alert"]')
    alert.wait_for()
    assert "Reload the page and try again." in alert.text_content()
    assert s.page.input_value("#find-question") == "Who pays the unit fee?"
    s.errors[:] = [e for e in s.errors if not any(p in e for p in PROVOKED)]


def test_page_and_citation_controls_keep_the_keyboard_focus_and_a_short_status_is_announced(
    signed_in, auditor, contract
):
    s = signed_in(auditor)
    ex = contract.extractions["Cap On Liability"]
    first, second = contract.citations["Cap On Liability"]
    s.page.goto(reverse("clause", args=[ex.document_id, ex.pk]))
    assert s.page.locator("#workspace[aria-live]").count() == 0  # not the whole panel read out on every swap
    status = s.page.locator("#workspace-status")
    assert status.get_attribute("aria-live") == "polite" or status.get_attribute("role") == "status"

    def focused_nav():
        return s.page.evaluate(
            "() => document.activeElement.getAttribute('data-nav') || document.activeElement.className"
        )

    s.page.focus('[data-nav="next-citation"]')
    s.page.keyboard.press("Enter")
    s.page.wait_for_selector(f'mark[data-citation-id="{second.pk}"]')
    s.settle()
    # the status line and the focus are set once the swap has settled, after the request ends: wait for the words
    expect(status).to_contain_text("citation 2 of 2")
    assert focused_nav() == "prev-citation"  # the last citation has no "next": its counterpart has the focus

    s.page.focus('[data-nav="next-page"]')
    s.page.keyboard.press("Enter")
    s.page.wait_for_selector(f'.page[data-page="{second.page + 1}"]')
    s.settle()
    expect(status).to_contain_text(f"Page {second.page + 1} of 6")
    assert focused_nav() == "next-page"

    s.page.fill(".page-input", "2")
    s.page.press(".page-input", "Enter")
    s.page.wait_for_selector('.page[data-page="2"]')
    s.settle()
    expect(status).to_contain_text("Page 2 of 6")
    assert focused_nav() == "page-input"


def test_the_review_page_text_is_readable_at_aa_contrast(signed_in, auditor, contract):
    s = signed_in(auditor)
    ex = contract.extractions["Cap On Liability"]
    s.page.goto(reverse("clause", args=[ex.document_id, ex.pk]))
    s.page.wait_for_selector("#clause-filter:not([hidden])")
    texts = [
        ".context.before",
        ".context.after",
        ".context-label",
        ".page-label",
        ".page-text",
        ".cite-meta",
        "#decision-form button.accept",
        "#decision-form button.accept kbd",
        "#decision-form button.reject",
        "#decision-form button.absent kbd",
        ".decision-pane .chip.engine",
        ".decision-pane .chip.status-found",
        ".decision-pane .chip.review-pending",
        ".clause-filter button[aria-pressed=true]",
        ".clause-filter button[aria-pressed=false]",
        ".group-title",
        ".clause-link .chip.status-unverified",
    ]
    ratios = {sel: round(contrast(s.page.locator(sel).first), 2) for sel in texts}
    assert {sel: r for sel, r in ratios.items() if r < AA} == {}


def test_the_keyboard_focus_ring_stands_out_on_the_page_and_in_the_top_bar(signed_in, auditor, contract):
    s = signed_in(auditor)
    ex = contract.extractions["Cap On Liability"]
    s.page.goto(reverse("clause", args=[ex.document_id, ex.pk]))
    s.page.wait_for_selector("#clause-filter:not([hidden])")
    controls = [
        ".topbar .brand",
        ".topbar nav a",
        ".topbar .logout button",
        "#decision-form button.accept",
        "#decision-reason",
        f'#clause-list [data-extraction-id="{ex.pk}"]',
        "#viewer",
        "#goto-page",
    ]
    ratios = {}
    for sel in controls:
        s.page.keyboard.press("Tab")  # from the keyboard: the ring is the one a keyboard user sees
        control = s.page.locator(sel).first
        control.focus()
        assert control.evaluate("el => el.matches(':focus-visible')"), sel
        ratios[sel] = round(focus_ring_contrast(control), 2)
    assert {sel: r for sel, r in ratios.items() if r < FOCUS} == {}


def test_r_then_enter_still_rejects_after_a_refused_decision(signed_in, auditor, contract):
    s = signed_in(auditor)
    ex = contract.extractions["Governing Law"]
    open_document(s, contract)
    click_clause(s, ex)
    s.page.keyboard.press("r")
    s.page.keyboard.press("Enter")  # no reason yet: refused
    s.page.wait_for_selector("#decision-error")
    s.settle()
    assert "Give a reason" in s.page.locator("#decision-error").text_content()
    assert s.page.evaluate("() => document.activeElement.id") == "decision-reason"
    s.page.keyboard.type("wrong party")
    s.page.keyboard.press("Enter")
    s.page.wait_for_selector('[data-review-state="reject"]')
    assert list(Review.objects.filter(extraction=ex).values_list("decision", "reason")) == [
        ("reject", "wrong party")
    ]


def test_a_clause_hidden_by_the_filter_does_not_stay_current(signed_in, auditor, contract):
    s = signed_in(auditor)
    law, insurance = contract.extractions["Governing Law"], contract.extractions["Insurance"]
    open_document(s, contract)
    click_clause(s, law)
    s.page.locator('#clause-filter [data-show="unverified"]').click()  # hides Governing Law
    s.page.locator("body").press("j")
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{insurance.pk}"]')
    s.settle()
    s.page.locator('#clause-filter [data-show="all"]').click()
    current = s.page.locator('#clause-list .clause-link[aria-current="true"]')
    assert current.evaluate_all("links => links.map(a => a.dataset.extractionId)") == [str(insurance.pk)]
    links = s.page.locator("#clause-list .clause-link")
    ids = [links.nth(i).get_attribute("data-extraction-id") for i in range(links.count())]
    s.page.locator("body").press("j")  # the one after Insurance, not after Governing Law
    after = (
        ids[ids.index(str(insurance.pk)) + 1]
        if ids.index(str(insurance.pk)) + 1 < len(ids)
        else str(insurance.pk)
    )
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{after}"]')


def test_no_contract_text_is_kept_in_browser_storage(signed_in, auditor, contract):
    s = signed_in(auditor)
    open_document(s, contract)
    for name in ("Governing Law", "Payment"):  # each htmx navigation pushes a history entry
        click_clause(s, contract.extractions[name])
    # htmx's history cache (sessionStorage in htmx 2.0.8) would keep the pages after signing out
    stored = s.page.evaluate(
        "() => [localStorage, sessionStorage].map(store => Object.keys(store)"
        ".map(k => store.getItem(k)).join(' ')).join(' ')"
    )
    assert "Delaware" not in stored and "MASTER SERVICES AGREEMENT" not in stored
    s.page.go_back()  # history still works, from the server
    s.page.wait_for_selector(
        f'#workspace [data-current-extraction="{contract.extractions["Governing Law"].pk}"]'
    )


def test_a_type_changed_after_moving_between_clauses_returns_to_the_clause_shown(
    signed_in, engagement, make_member, contract
):
    s = signed_in(make_member(engagement, "admin", username="ada"))
    open_document(s, contract)
    ex = contract.extractions["Payment"]
    click_clause(s, ex)  # an htmx swap: the header with the type form is not loaded again
    s.page.locator(".type-edit summary").click()
    s.page.fill("#doc-type-input", "Lease")
    s.page.locator(".type-edit button[type=submit]").click()
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{ex.pk}"]')
    assert s.page.url.endswith(reverse("clause", args=[contract.document.pk, ex.pk]))


def test_a_decision_key_pressed_as_the_clause_shows_records_on_it_through_htmx(signed_in, auditor, contract):
    s = signed_in(auditor)
    open_document(s, contract)
    # htmx settles a swap 20 ms after it; a busy machine takes longer: here half a second
    s.page.evaluate("() => { htmx.config.defaultSettleDelay = 500; window.samePage = true; }")
    first = int(s.page.locator("#clause-list .clause-link:visible").first.get_attribute("data-extraction-id"))
    s.page.locator("body").press("j")
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{first}"]')  # shown, not yet settled
    s.page.keyboard.press("a")
    s.page.wait_for_selector("#decision-saved")
    assert s.page.evaluate("() => window.samePage === true")  # the form was not posted as a page of its own
    assert list(Review.objects.filter(extraction_id=first).values_list("decision", flat=True)) == ["accept"]
    assert not s.page.locator("#decision-held").count()
