"""Review progress per engagement and per reviewer, reviewed / total by clause type."""

from __future__ import annotations

import pytest
from django.urls import reverse

from engagements.models import Engagement
from extraction.models import Extraction
from reviewer.models import Review
from reviewer.progress import engagement_progress


@pytest.mark.django_db
def test_progress_counts_each_clause_once_overall_and_per_reviewer(client, contract, engagement, make_member):
    alice, bob = make_member(engagement, "auditor", "alice"), make_member(engagement, "auditor", "bob")
    pairs = list(
        Extraction.objects.filter(document=contract.document)
        .order_by("clause_type__name")
        .values_list("document_id", "clause_type__name")
        .distinct()
    )
    first, second = (
        Extraction.objects.filter(document=contract.document, clause_type__name=name).first()
        for _, name in pairs[:2]
    )
    for who, ex in ((alice, first), (alice, first), (bob, first), (bob, second)):  # alice twice: one clause
        Review.objects.create(extraction=ex, reviewer=who, decision="accept", extraction_version=ex.version)
    overall, reviewers = engagement_progress(engagement)
    assert (overall.reviewed, overall.total) == (2, len(pairs))
    assert overall.by_type[first.clause_type.name] == (1, 1)
    assert (reviewers["alice"].reviewed, reviewers["bob"].reviewed) == (1, 2)
    assert reviewers["alice"].by_type[second.clause_type.name] == (0, 1)

    url = reverse("engagement-progress", args=[engagement.pk])
    client.force_login(make_member(engagement, "manager"))
    page = client.get(url).content.decode()
    assert f"<strong>2 / {len(pairs)}</strong>" in page and 'data-reviewer="alice"' in page
    client.force_login(make_member(Engagement.objects.create(name="Beta audit 2026"), "admin"))
    assert client.get(url).status_code == 404
