"""The engagement workspace in Chromium: from the grid (filtered) to a cell's clause on its page, decided
from the keyboard, and back to the grid with its filters kept; the comparison of one clause type."""

from __future__ import annotations

import shutil

import pytest
from django.urls import reverse

from extraction.models import Extraction, ExtractionRun
from tests.e2e.conftest import FOCUS, focus_ring_contrast
from tests.factories import ensure_clause_types, make_reviewable

pytestmark = pytest.mark.django_db(transaction=True)

NEW_YORK = "governed by the laws of the State of New York"


@pytest.fixture
def contracts(engagement):
    made = [make_reviewable(engagement, title=f"{name} agreement", seed=i) for i, name in enumerate("ABCD")]
    types = ensure_clause_types()
    run = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
    last = made[-1].document
    Extraction.objects.filter(document=last, clause_type=types["Governing Law"]).delete()
    Extraction.objects.create(
        run=run,
        document=last,
        clause_type=types["Governing Law"],
        status="found",
        engine="offline",
        clause_text=NEW_YORK,
        dedupe_key="ny",
    )
    return made, types


def test_grid_cell_page_decide_and_back_to_the_grid_with_its_filters(
    signed_in, engagement, make_member, contracts
):
    made, types = contracts
    s = signed_in(make_member(engagement, "auditor", username="alice"))
    payment = types["Payment"].pk
    grid = reverse("engagement-grid", args=[engagement.pk]) + f"?type={payment}&status=found&sort=-title"
    s.page.goto(grid)
    rows = s.page.locator(".grid tbody tr")
    assert rows.count() == 4
    assert s.page.locator(".grid tbody .doc-col a").first.text_content() == "D agreement"
    shutil.copy(s.shot("30-engagement-grid"), "/tmp/grid.png")
    target = made[-1].extractions["Payment"]
    cell = s.page.locator(f'.cell-link[data-extraction-id="{target.pk}"]')
    cell.focus()
    assert focus_ring_contrast(cell) >= FOCUS  # a keyboard user sees where they are
    s.page.keyboard.press("Enter")
    s.page.wait_for_url(f"**{reverse('clause', args=[target.document_id, target.pk])}")
    s.page.wait_for_selector(f'#workspace [data-current-extraction="{target.pk}"]')
    s.settle()
    s.page.locator("body").press("a")
    s.page.wait_for_function(
        f"() => document.querySelector('#clause-item-{target.pk}')?.dataset.review === 'accept'"
    )
    s.page.go_back()
    s.page.wait_for_url(f"**{grid}")
    again = s.page.locator(f'.cell-link[data-extraction-id="{target.pk}"]')
    assert "accepted" in again.text_content()
    assert s.page.locator('select[name="status"]').input_value() == "found"


def test_comparison_page_shows_the_unusual_wording_first_with_its_difference(
    signed_in, engagement, make_member, contracts
):
    _made, types = contracts
    s = signed_in(make_member(engagement, "auditor", username="bob"))
    s.page.goto(reverse("engagement-compare-type", args=[engagement.pk, types["Governing Law"].pk]))
    first = s.page.locator(".wording-group").first
    assert "Unusual wording" in first.locator("h2").text_content()
    assert first.locator("ins").first.text_content() == "New York"
    button = s.page.locator(".wording-group.usual button.accept")
    button.focus()
    assert focus_ring_contrast(button) >= FOCUS
    shutil.copy(s.shot("31-compare-clause-type", full_page=True), "/tmp/compare.png")
    button.press("Enter")
    s.page.wait_for_selector(".msg.success")
    assert "Accepted 3 clauses" in s.page.locator(".msg.success").text_content()
    assert s.page.locator(".wording-group.usual .chip.review-accept").count() >= 3
