"""How sure the engine is, in Chromium: each answer's chip, and the "Less sure" filter that lists the
answers a reviewer should look at first."""

from __future__ import annotations

import pytest
from django.urls import reverse

from extraction.models import Extraction
from tests.factories import make_reviewable

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_less_sure_filter_lists_only_the_answers_the_engine_doubts(signed_in, engagement, make_member):
    contract = make_reviewable(engagement)
    doubted, *sure = contract.extractions.values()
    Extraction.objects.filter(pk=doubted.pk).update(confidence=0.55)
    Extraction.objects.filter(pk__in=[ex.pk for ex in sure]).update(confidence=0.96)
    s = signed_in(make_member(engagement, "auditor"))
    s.page.goto(reverse("document", args=[contract.document.pk]))
    s.page.wait_for_selector("#clause-filter:not([hidden])")
    unsure = s.page.locator('#clause-filter button[data-show="unsure"]')
    assert unsure.locator(".n").text_content() == "1"
    item = s.page.locator(f"#clause-item-{doubted.pk}")
    assert "55% sure" in item.locator(".chip.confidence").text_content()
    unsure.focus()
    s.page.keyboard.press("Enter")  # the filter is a button: the keyboard works it
    assert item.is_visible()
    assert all(not s.page.locator(f"#clause-item-{ex.pk}").is_visible() for ex in sure)
    item.locator(".clause-link").click()
    s.page.wait_for_selector("#confidence")
    assert "55% sure this is the clause: check it first" in s.page.locator("#confidence").text_content()
    s.shot("32-less-sure")
