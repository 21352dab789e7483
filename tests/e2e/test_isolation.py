"""An auditor of engagement A reaches nothing of engagement B: not by URL, fragment, export or POST."""

from __future__ import annotations

import pytest
from django.urls import reverse

from engagements.models import Engagement
from reviewer.models import Review
from tests.factories import make_reviewable

pytestmark = pytest.mark.django_db(transaction=True)


def urls_of(contract, engagement):
    doc = contract.document
    ex = contract.extractions["Governing Law"]
    cit = contract.citations["Governing Law"][0]
    pages = [
        reverse("engagement", args=[engagement.pk]),
        reverse("engagement-documents", args=[engagement.pk]),
        reverse("engagement-upload", args=[engagement.pk]),
        reverse("engagement-members", args=[engagement.pk]),
        reverse("document", args=[doc.pk]),
        reverse("document-file", args=[doc.pk]),
        reverse("document-page", args=[doc.pk, 2]),
        reverse("clause", args=[doc.pk, ex.pk]),
        reverse("citation", args=[doc.pk, ex.pk, cit.pk]),
        reverse("clause-page", args=[doc.pk, ex.pk, 3]),
    ]
    exports = [
        reverse(name, args=[pk, fmt])
        for name, pk in (
            ("document-export", doc.pk),
            ("engagement-export", engagement.pk),
            ("run-export", ex.run_id),
        )
        for fmt in ("csv", "json", "xlsx")
    ]
    posts = [
        reverse("decide", args=[doc.pk, ex.pk]),
        reverse("find", args=[doc.pk]),
        reverse("engagement-upload", args=[engagement.pk]),
        reverse("engagement-members", args=[engagement.pk]),
    ]
    return pages, exports, posts


def test_auditor_of_a_reaches_nothing_of_b(signed_in, engagement, make_member):
    a_contract = make_reviewable(engagement, title="Engagement A contract")
    other = Engagement.objects.create(name="Globex audit 2026", client="Globex")
    b_contract = make_reviewable(other, title="Globex confidential MSA", seed=7)
    make_member(other, "admin", username="globex-admin")
    auditor = make_member(engagement, "auditor", username="alice")
    s = signed_in(auditor)

    s.page.goto("/")
    assert "Globex" not in s.page.content()
    s.shot("07-home")

    pages, exports, posts = urls_of(b_contract, other)
    # the cross-engagement mix: a document of A with a clause id of B, and the reverse
    ex_b = b_contract.extractions["Governing Law"]
    ex_a = a_contract.extractions["Governing Law"]
    pages += [
        reverse("clause", args=[a_contract.document.pk, ex_b.pk]),
        reverse(
            "citation", args=[a_contract.document.pk, ex_a.pk, b_contract.citations["Governing Law"][0].pk]
        ),
    ]
    for url in pages:
        response = s.page.goto(url)
        assert response.status == 404, url
        assert "Globex confidential" not in s.page.content()
    s.shot("08-not-found")
    csrf = s.page.locator('meta[name="csrf-token"]').get_attribute("content")
    fragment = {"HX-Request": "true"}
    for url in pages + exports:
        response = s.page.request.get(url, headers=fragment)
        assert response.status == 404, url
        assert b"Globex confidential" not in response.body()
    for url in posts:
        response = s.page.request.post(
            url,
            headers={**fragment, "X-CSRFToken": csrf, "Referer": s.page.url},
            form={
                "decision": "accept",
                "seen_review": "0",
                "seen_version": "1",
                "question": "governing law",
                "username": "alice",
                "role": "admin",
                "action": "add",
            },
        )
        assert response.status == 404, url
    assert not Review.objects.exists()
    # ...while A's own export holds A's clauses only
    body = s.page.request.get(reverse("engagement-export", args=[engagement.pk, "json"])).json()
    assert {c["document"] for c in body["clauses"]} == {"Engagement A contract"}


def test_post_without_csrf_token_is_refused(signed_in, engagement, make_member):
    contract = make_reviewable(engagement)
    s = signed_in(make_member(engagement, "auditor", username="alice"))
    s.page.goto("/")
    ex = contract.extractions["Governing Law"]
    response = s.page.request.post(
        reverse("decide", args=[ex.document_id, ex.pk]),
        headers={"HX-Request": "true"},
        form={"decision": "accept", "seen_review": "0", "seen_version": "1"},
    )
    assert response.status == 403
    assert not Review.objects.exists()
