"""A free question asked on the review page in Chromium: listed under "Questions asked", decided like a clause
from the keyboard, and never counted by the clause filter (All / Found / Not reviewed)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from extraction.models import Extraction
from tests.factories import make_reviewable

pytestmark = pytest.mark.django_db(transaction=True)


def _counts(page) -> dict:
    return page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('#clause-filter button[data-show]')]"
        ".map(b => [b.dataset.show, b.querySelector('.n').textContent]))"
    )


def test_a_question_asked_is_listed_apart_and_leaves_the_clause_counts_as_they_were(
    signed_in, engagement, make_member
):
    contract = make_reviewable(engagement)
    s = signed_in(make_member(engagement, "auditor", username="alice"))
    s.page.goto(reverse("document", args=[contract.document.pk]))
    s.page.wait_for_selector("#clause-filter:not([hidden])")
    before = _counts(s.page)
    assert before["all"] == str(len(contract.extractions))
    s.page.locator("body").press("/")
    s.page.keyboard.type("What unit fee does the customer pay?")
    s.page.keyboard.press("Enter")
    s.page.wait_for_selector("#clause-list .question-item")
    answer = Extraction.objects.latest("id")
    assert answer.clause_type.name.startswith("Q: ")
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{answer.pk}"]')
    assert _counts(s.page) == before
    item = s.page.locator(f"#clause-item-{answer.pk}")
    assert "What unit fee does the customer pay?" in item.text_content()
    assert "asked by alice" in item.text_content()
    assert s.page.locator("#questions-title").text_content().startswith("Questions asked")
    assert (
        "Question: What unit fee does the customer pay?" in s.page.locator(".decision-pane h2").text_content()
    )
    # decided from the keyboard like a clause; the counts stay the clauses'
    s.page.wait_for_function(f"() => document.activeElement?.dataset.extractionId === '{answer.pk}'")
    s.page.keyboard.press("a")
    s.page.wait_for_function(
        f"() => document.querySelector('#clause-item-{answer.pk}')?.dataset.review === 'accept'"
    )
    assert _counts(s.page) == before
    # the "Not reviewed" filter hides decided clauses, never the questions list
    s.page.click('#clause-filter button[data-show="pending"]')
    assert item.is_visible()
    s.shot("19-questions-asked")
