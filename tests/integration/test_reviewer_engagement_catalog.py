"""The clause catalog scoped by engagement: each engagement's own types and retirements are its alone."""

from __future__ import annotations

import pytest
from django.urls import reverse

from engagements.models import Engagement
from extraction import launch
from extraction.catalog import scope
from extraction.models import ClauseTask, ClauseType, ClauseTypeRetirement
from ingest.models import Document

FIELDS = {"description": "Who may hire whom", "query": "shall not solicit employees", "kind": "text"}


@pytest.fixture
def other(db):
    return Engagement.objects.create(name="Beta audit 2026", client="Beta")


def _own(engagement, name="Non-Solicit (Beta)") -> ClauseType:
    return ClauseType.objects.create(
        name=name,
        slug=f"e{engagement.pk}-{name.lower().replace(' ', '-')}",
        engagement=engagement,
        source="custom",
        **FIELDS,
    )


def _document(engagement) -> Document:
    return Document.objects.create(
        engagement=engagement, original_name="msa.pdf", title="msa.pdf", status=Document.Status.READY
    )


def _names(engagement) -> set[str]:
    return {t.name for t in scope.active_types(engagement)}


@pytest.mark.django_db
def test_a_member_of_one_engagement_gets_404_for_anothers_catalog_retire_and_edit(
    client, engagement, other, make_member
):
    theirs = _own(other)
    law = ClauseType.objects.get(name="Governing Law")
    client.force_login(make_member(engagement, "admin"))
    for url in (
        reverse("engagement-catalog", args=[other.pk]),
        reverse("engagement-catalog-retire", args=[other.pk, law.pk]),
        reverse("engagement-catalog-edit", args=[other.pk, theirs.pk]),
    ):
        assert client.get(url).status_code == 404
        assert client.post(url, {"confirm": "on", **FIELDS, "name": "X"}).status_code == 404
    # B's own type is not reachable through A's pages either
    for url in (
        reverse("engagement-catalog-retire", args=[engagement.pk, theirs.pk]),
        reverse("engagement-catalog-edit", args=[engagement.pk, theirs.pk]),
    ):
        assert client.get(url).status_code == 404
    page = client.get(reverse("engagement-catalog", args=[engagement.pk])).content.decode()
    assert "Governing Law" in page and theirs.name not in page
    assert not ClauseTypeRetirement.objects.exists()


@pytest.mark.django_db
def test_a_non_admin_member_reads_the_catalog_but_cannot_change_it(client, engagement, make_member):
    law = ClauseType.objects.get(name="Governing Law")
    url = reverse("engagement-catalog", args=[engagement.pk])
    for role in ("auditor", "manager"):
        client.force_login(make_member(engagement, role))
        assert client.get(url).status_code == 200
        assert client.post(url, {**FIELDS, "name": "Mine"}).status_code == 403
        assert client.post(url, {"reactivate": law.pk}).status_code == 403
        retire = reverse("engagement-catalog-retire", args=[engagement.pk, law.pk])
        assert client.post(retire, {"confirm": "on"}).status_code == 403
        assert client.post(reverse("catalog-retire", args=[law.pk]), {"confirm": "on"}).status_code == 403
    assert not ClauseType.objects.filter(name="Mine").exists()
    assert not ClauseTypeRetirement.objects.exists() and ClauseType.objects.get(pk=law.pk).active


@pytest.mark.django_db
def test_an_admin_adds_and_edits_an_own_type_for_the_engagement_only(client, engagement, other, make_member):
    client.force_login(make_member(engagement, "admin"))
    url = reverse("engagement-catalog", args=[engagement.pk])
    assert client.post(url, {**FIELDS, "name": "Non-Solicit"}).status_code == 302
    mine = ClauseType.objects.get(name="Non-Solicit")
    assert mine.engagement == engagement and mine.source == "custom"
    assert "Non-Solicit" in _names(engagement) and "Non-Solicit" not in _names(other)
    assert "Non-Solicit" not in {t.name for t in scope.active_types(None)}  # nor the global catalog
    client.get(url)  # the flash message is shown and gone
    assert "Non-Solicit" not in client.get(reverse("catalog")).content.decode()
    edit = reverse("engagement-catalog-edit", args=[engagement.pk, mine.pk])
    assert client.post(edit, {**FIELDS, "name": "No Poaching", "example": ""}).status_code == 302
    mine.refresh_from_db()
    assert mine.name == "No Poaching" and mine.changes.count() == 1
    # a global type's wording is the superusers'
    law = ClauseType.objects.get(name="Governing Law")
    assert client.get(reverse("engagement-catalog-edit", args=[engagement.pk, law.pk])).status_code == 403
    # another engagement's own type of the same name neither blocks the name nor is told of
    theirs = _own(other, "Exclusivity Beta")
    assert client.post(url, {**FIELDS, "name": "Exclusivity Beta"}).status_code == 302
    ours = ClauseType.objects.get(name="Exclusivity Beta", engagement=engagement)
    assert ours.pk != theirs.pk and ours.slug != theirs.slug
    # a twin among the types this engagement sees is refused, named
    refused = client.post(url, {**FIELDS, "name": "exclusivity  beta"})
    assert (
        refused.status_code == 422
        and "“Exclusivity Beta” is already in the catalog" in refused.content.decode()
    )
    refused = client.post(url, {**FIELDS, "name": "governing law"})
    assert (
        refused.status_code == 422 and "“Governing Law” is already in the catalog" in refused.content.decode()
    )


def test_a_type_is_named_among_the_types_its_engagement_sees(engagement, other):
    """Find a clause and ``manage.py extract --type`` resolve a name within the engagement: its own
    type, never another engagement's of the same name."""
    from django.core.management import CommandError, call_command

    from extraction.service import resolve_type

    mine, theirs = _own(engagement, "Earn-Out"), _own(other, "Earn-Out")
    assert resolve_type("Earn-Out", engagement) == mine and resolve_type("Earn-Out", other) == theirs
    assert resolve_type(theirs.slug, other) == theirs
    only_theirs = _own(other, "Step-In Rights")
    for asked in ("Step-In Rights", only_theirs.slug, only_theirs):
        with pytest.raises(ValueError, match="Unknown clause type"):
            resolve_type(asked, engagement)
    assert resolve_type("Governing Law", engagement).engagement is None
    _document(engagement)
    with pytest.raises(CommandError, match="Unknown clause type 'Step-In Rights'"):
        call_command("extract", engagement=engagement.name, types=["Step-In Rights"])


@pytest.mark.django_db
def test_retiring_in_one_engagement_needs_a_yes_and_leaves_the_other_extracting_it(
    client, engagement, other, make_member
):
    launch.active_types()  # the catalog is seeded
    law = ClauseType.objects.get(name="Governing Law")
    admin = make_member(engagement, "admin")
    client.force_login(admin)
    page = reverse("engagement-catalog", args=[engagement.pk])
    retire = reverse("engagement-catalog-retire", args=[engagement.pk, law.pk])
    assert client.post(page, {"retire": law.pk})["Location"] == retire  # one click only asks
    confirm_page = client.get(retire)
    assert confirm_page.status_code == 200 and 'name="confirm"' in confirm_page.content.decode()
    refused = client.post(retire, {})
    assert refused.status_code == 422 and "Tick" in refused.content.decode()
    assert "Governing Law" in _names(engagement)
    for _ in range(2):  # a double click retires it once
        assert client.post(retire, {"confirm": "on"}).status_code == 302
    (row,) = ClauseTypeRetirement.objects.all()
    assert (row.engagement, row.clause_type, row.retired, row.by) == (engagement, law, True, admin)
    law.refresh_from_db()
    assert law.active  # the global flag is untouched
    assert "Governing Law" not in _names(engagement) and "Governing Law" in _names(other)

    doc_a, doc_b = _document(engagement), _document(other)
    run_a = launch.create_run(engagement, documents=[doc_a], enqueue=False)
    run_b = launch.create_run(other, documents=[doc_b], enqueue=False)
    assert not ClauseTask.objects.filter(run=run_a, clause_type=law).exists()
    assert ClauseTask.objects.filter(run=run_b, clause_type=law).exists()
    assert "Governing Law" in {t.name for t in launch.types_for(run_b)}
    assert "Governing Law" not in {t.name for t in launch.types_for(run_a)}
    assert "retired here" in client.get(page).content.decode()

    assert client.post(page, {"reactivate": law.pk}).status_code == 302
    assert "Governing Law" in _names(engagement)
    assert list(ClauseTypeRetirement.objects.order_by("id").values_list("retired", flat=True)) == [
        True,
        False,
    ]
    with pytest.raises(ValueError):
        row.delete()


@pytest.mark.django_db
def test_an_engagement_extracts_its_own_and_the_global_active_types_less_its_retirements(
    engagement, other, make_member
):
    from reviewer.catalog_edits import set_active, set_retired

    launch.active_types()
    admin = make_member(engagement, "admin")
    mine, theirs = _own(engagement, "Mine Only"), _own(other, "Theirs Only")
    law = ClauseType.objects.get(name="Governing Law")
    cap = ClauseType.objects.get(name="Cap On Liability")
    set_retired(engagement, law, True, admin)
    set_active(cap, False, admin)  # retired globally (a superuser's act)
    global_active = set(
        ClauseType.objects.filter(active=True, engagement__isnull=True).values_list("name", flat=True)
    )
    expected = (global_active | {"Mine Only"}) - {"Governing Law"}
    assert _names(engagement) == expected
    assert _names(other) == global_active | {"Theirs Only"}
    assert "Cap On Liability" not in _names(engagement) | _names(other)
    run = launch.create_run(engagement, documents=[_document(engagement)], enqueue=False)
    tasked = set(ClauseTask.objects.filter(run=run).values_list("clause_type__name", flat=True).distinct())
    assert tasked == expected and theirs.name not in tasked and mine.name in tasked


@pytest.mark.django_db
def test_the_bulk_form_grid_and_find_offer_the_engagements_own_types(client, engagement, other, make_member):
    from bulk.forms import BulkExtractForm
    from bulk.service import BulkError, resolve_clause_types
    from reviewer.forms import FindForm
    from reviewer.grid import catalog_types

    launch.active_types()
    mine, theirs = _own(engagement, "Mine Only"), _own(other, "Theirs Only")
    bulk_names = {t.name for t in BulkExtractForm(engagement=engagement).fields["clause_types"].queryset}
    find_names = {t.name for t in FindForm(engagement=engagement).fields["clause_type"].queryset}
    grid_names = {t.name for t in catalog_types(engagement)}
    for names in (bulk_names, find_names, grid_names):
        assert mine.name in names and theirs.name not in names
    assert resolve_clause_types(["Mine Only"], engagement) == [mine]
    with pytest.raises(BulkError):
        resolve_clause_types(["Theirs Only"], engagement)


@pytest.mark.django_db
def test_only_a_superuser_retires_a_global_type_for_every_engagement(
    client, engagement, other, make_member, django_user_model
):
    law = ClauseType.objects.get(name="Governing Law")
    retire = reverse("catalog-retire", args=[law.pk])
    client.force_login(make_member(engagement, "admin"))
    assert client.get(retire).status_code == 403
    assert client.post(retire, {"confirm": "on"}).status_code == 403
    client.force_login(django_user_model.objects.create_superuser("root", password="pw-long-1"))
    assert client.get(retire).status_code == 200
    assert client.post(retire, {"confirm": "on"}).status_code == 302
    assert "Governing Law" not in _names(engagement) | _names(other)
