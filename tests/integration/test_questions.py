"""Free questions asked with Find a clause are not clauses: listed apart under "Questions asked" with who
asked them and when, out of the clause list, its counts, the exports (unless asked for) and the accuracy
figures; their answers are cited, verified and reviewed like a clause, and scoped like one."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from dashboards.figures import reviewer_counts
from engagements.models import Engagement
from extraction.models import Extraction
from ingest.models import Document
from reviewer import clauses
from reviewer.decisions import record_decision
from reviewer.models import Review
from tests.factories import make_reviewable
from tests.markup import elements

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}
QUESTION = "Who pays the unit fee?"


def _ask(client, document, question=QUESTION) -> Extraction:
    response = client.post(reverse("find", args=[document.pk]), {"question": question}, **HX)
    assert response.status_code == 200, response.content.decode()[:500]
    return Extraction.objects.filter(document=document).latest("id")


def _counts(document) -> tuple:
    row = clauses.counted(Document.objects.filter(pk=document.pk))[0]
    return row.n_found, row.n_not_found, row.n_unverified, row.n_reviewed


@pytest.fixture
def alice(engagement, make_member, client):
    user = make_member(engagement, "auditor", username="alice")
    client.force_login(user)
    return user


def test_a_question_is_listed_apart_with_who_asked_and_is_not_counted_as_a_clause(client, alice, contract):
    doc = contract.document
    counts_before = _counts(doc)
    answer = _ask(client, doc)
    assert answer.clause_type.name.startswith("Q: ")
    record_decision(extraction_id=answer.pk, user=alice, decision="accept", seen_review_id=0, seen_version=1)

    assert _counts(doc) == counts_before  # neither found nor reviewed: the documents table counts clauses
    assert all(not name.startswith("Q: ") for name, _items in clauses.groups(doc))
    html = client.get(reverse("document", args=[doc.pk])).content.decode()
    (item,) = elements(html, cls="question-item")
    assert item["id"] == f"clause-item-{answer.pk}" and item["data-review"] == "accept"
    listed = re.search(rf'id="clause-item-{answer.pk}".*?</li>', html, re.S).group(0)
    assert QUESTION in listed and "asked by alice" in listed and " UTC" in listed
    # the clause filter counts .clause-item:not(.question-item), the clause types' items alone
    assert len(elements(html, cls="clause-item")) == len(elements(html, cls="question-item")) + sum(
        len(items) for _name, items in clauses.groups(doc)
    )
    assert "Questions asked" in html


def test_the_same_question_asked_again_with_the_same_answer_is_one_item_with_both_asks(
    client, alice, contract, engagement, make_member
):
    first = _ask(client, contract.document)
    bob = make_member(engagement, "auditor", username="bob")
    client.force_login(bob)
    again = _ask(client, contract.document)
    assert again.pk != first.pk and again.clause_text == first.clause_text
    html = client.get(reverse("document", args=[contract.document.pk])).content.decode()
    (item,) = elements(html, cls="question-item")
    listed = re.search(rf'id="{item["id"]}".*?</li>', html, re.S).group(0)
    assert re.search(r"asked by bob, .*; alice, ", listed, re.S)  # the latest ask first


def test_a_questions_answer_is_decided_like_a_clause_and_its_list_item_follows(client, alice, contract):
    answer = _ask(client, contract.document)
    html = client.get(reverse("clause", args=[answer.document_id, answer.pk]), **HX).content.decode()
    assert f"Question: {QUESTION}" in html and "asked by alice" in html
    assert 'id="decision-form"' in html
    for cit in answer.citations.all():  # cited, and verified by the server like a clause
        assert Document.objects.get(pk=answer.document_id).text[cit.start : cit.end] == cit.quote
    response = client.post(
        reverse("decide", args=[answer.document_id, answer.pk]),
        {
            "decision": "reject",
            "reason": "the fee is paid by the customer",
            "seen_review": 0,
            "seen_version": 1,
        },
        **HX,
    )
    assert response.status_code == 200
    body = response.content.decode()
    (item,) = elements(body, cls="question-item")  # the refreshed item is the question's, swapped in
    assert item["data-review"] == "reject" and item.get("hx-swap-oob") == "true"
    assert Review.objects.get(extraction=answer).decision == "reject"


def test_exports_leave_questions_out_unless_asked_for(client, alice, contract, engagement):
    answer = _ask(client, contract.document)
    for name, pk in (("document-export", contract.document.pk), ("engagement-export", engagement.pk)):
        plain = json.loads(b"".join(client.get(reverse(name, args=[pk, "json"])).streaming_content))
        assert answer.pk not in {c["extraction_id"] for c in plain["clauses"]}
        assert plain["clauses"] and not plain["questions_included"]
        asked = client.get(reverse(name, args=[pk, "json"]) + "?questions=1")
        body = json.loads(b"".join(asked.streaming_content))
        assert answer.pk in {c["extraction_id"] for c in body["clauses"]} and body["questions_included"]
        assert "with-questions" in asked["Content-Disposition"]
        csv = b"".join(client.get(reverse(name, args=[pk, "csv"])).streaming_content).decode()
        assert "Q: " not in csv
    page = client.get(reverse("document", args=[contract.document.pk])).content.decode()
    assert reverse("document-export", args=[contract.document.pk, "csv"]) + "?questions=1" in page


def test_the_accuracy_figures_leave_questions_out(client, alice, contract, engagement):
    answer = _ask(client, contract.document)
    record_decision(extraction_id=answer.pk, user=alice, decision="accept", seen_review_id=0, seen_version=1)
    law = contract.extractions["Governing Law"]
    record_decision(extraction_id=law.pk, user=alice, decision="accept", seen_review_id=0, seen_version=1)
    names = {s["clause_type"] for s in reviewer_counts([engagement.pk])["strata"]}
    assert "Governing Law" in names and not any(n.startswith("Q: ") for n in names)


def test_a_member_of_another_engagement_gets_404_for_its_questions(client, contract, engagement, make_member):
    other = Engagement.objects.create(name="Globex audit 2026", client="Globex")
    theirs = make_reviewable(other, title="Globex confidential MSA", seed=7)
    client.force_login(make_member(other, "auditor", username="globex-auditor"))
    answer = _ask(client, theirs.document, "Who pays the Globex fee?")
    client.force_login(make_member(engagement, "admin", username="acme-admin"))
    doc = theirs.document
    for url in (
        reverse("clause", args=[doc.pk, answer.pk]),
        reverse("clause", args=[contract.document.pk, answer.pk]),  # under a document of one's own
        reverse("document-clauses", args=[doc.pk]),
        reverse("document-export", args=[doc.pk, "json"]) + "?questions=1",
        reverse("engagement-export", args=[other.pk, "json"]) + "?questions=1",
        reverse("run-export", args=[answer.run_id, "json"]) + "?questions=1",
    ):
        for headers in ({}, HX):
            response = client.get(url, **headers)
            assert response.status_code == 404, url
            assert b"Globex" not in b"".join(getattr(response, "streaming_content", [response.content]))
    posted = client.post(
        reverse("decide", args=[doc.pk, answer.pk]),
        {"decision": "accept", "seen_review": 0, "seen_version": 1},
        **HX,
    )
    assert posted.status_code == 404 and not Review.objects.exists()
    own = client.get(reverse("document", args=[contract.document.pk])).content.decode()
    assert "Globex" not in own and not elements(own, cls="question-item")
    mine = json.loads(
        b"".join(
            client.get(
                reverse("engagement-export", args=[engagement.pk, "json"]) + "?questions=1"
            ).streaming_content
        )
    )
    assert answer.pk not in {c["extraction_id"] for c in mine["clauses"]}
