"""What the review page says about a clause's decisions: the keys a role can use, the version a correction
made, the time zone of each time, and the `n` key's decision in words."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from reviewer.decisions import record_decision
from reviewer.models import Review
from tests.markup import elements

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def _keys(html: str) -> str:
    return re.search(r'<span class="keys[^"]*"[^>]*>(.*?)</span>', html, re.S).group(1)


def _history(html: str) -> list[str]:
    return [
        re.sub(r"<[^>]+>|\s+", " ", item).strip()
        for item in re.findall(r'<li class="history-item".*?</li>', html, re.S)
    ]


@pytest.mark.parametrize("role", ["manager", "auditor", "admin"])
def test_the_keyboard_hints_name_only_what_the_role_can_do(client, engagement, make_member, contract, role):
    client.force_login(make_member(engagement, role))
    keys = _keys(client.get(reverse("document", args=[contract.document.pk])).content.decode())
    assert "<kbd>j</kbd>/<kbd>k</kbd> clause" in keys  # everyone moves between clauses
    deciding = (
        "<kbd>a</kbd> accept",
        "<kbd>r</kbd> reject",
        "<kbd>n</kbd> not in contract",
        "<kbd>e</kbd> edit",
    )
    for hint in (*deciding, "<kbd>/</kbd> find"):
        assert (hint in keys) == (role != "manager"), (role, hint)


def test_a_corrected_clauses_version_agrees_with_its_history(client, engagement, make_member, contract):
    auditor = make_member(engagement, "auditor")
    client.force_login(auditor)
    ex = contract.extractions["Payment"]
    review = record_decision(
        extraction_id=ex.pk,
        user=auditor,
        decision="correct",
        corrected_text="a unit fee of $247.83 per record",
        seen_review_id=0,
        seen_version=1,
    )
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    assert len(elements(html, cls="version")) == 1 and re.search(r'class="chip version"[^>]*>v2<', html)
    (item,) = _history(html)
    assert "on v1, made v2" in item
    record_decision(
        extraction_id=ex.pk, user=auditor, decision="accept", seen_review_id=review.pk, seen_version=2
    )
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    accepted, corrected = _history(html)
    assert accepted.endswith("on v2") and "made" not in accepted and "on v1, made v2" in corrected


def test_history_times_say_their_time_zone(client, engagement, make_member, contract):
    auditor = make_member(engagement, "auditor")
    client.force_login(auditor)
    ex = contract.extractions["Governing Law"]
    record_decision(extraction_id=ex.pk, user=auditor, decision="accept", seen_review_id=0, seen_version=1)
    at = Review.objects.get(extraction=ex).created_at
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    (time,) = re.findall(r'<li class="history-item".*?<time[^>]*>(.*?)</time>', html, re.S)
    assert time == f"{at:%Y-%m-%d %H:%M:%S} UTC"
    assert re.search(r"Last decision by [^,]+, \d{4}-\d\d-\d\d \d\d:\d\d UTC", html)


def test_the_n_keys_decision_is_named_not_in_this_contract_in_the_history(
    client, engagement, make_member, contract
):
    client.force_login(make_member(engagement, "auditor"))
    ex = contract.extractions["Governing Law"]
    decided = client.post(
        reverse("decide", args=[ex.document_id, ex.pk]),
        {"decision": "absent", "seen_review": 0, "seen_version": 1},
        follow=True,  # without JavaScript: back to the clause, with what was recorded
    )
    assert "Recorded: not in this contract." in decided.content.decode()
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    (item,) = _history(html)
    assert item.startswith("Not in this contract ") and "Correct" not in item
    assert Review.objects.get(extraction=ex).decision == "correct"  # recorded as a correction to not_found
