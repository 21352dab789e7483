"""Forms with help text: the text a field's aria-describedby names is in the page, so a screen reader reads it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from dashboards import benchmarks
from extraction.models import ClauseType
from tests.integration.dashboards.builders import write_corpus
from tests.markup import dangling_references

pytestmark = pytest.mark.django_db


def test_every_described_field_has_its_description_in_the_page(
    client, engagement, make_member, tmp_path, django_user_model
):
    # Django points a field with help text at "<id>_helptext"; the templates wrote the text with no id
    benchmarks.import_set(write_corpus(tmp_path / "corpus"), engagement=engagement)
    admin, manager = make_member(engagement, "admin"), make_member(engagement, "manager")
    clause_type = ClauseType.objects.filter(active=True).first()
    root = django_user_model.objects.create_superuser("root", password="pw-long-1")
    pages = {
        root: [
            reverse("catalog"),
            reverse("catalog-edit", args=[clause_type.pk]),
            reverse("catalog-retire", args=[clause_type.pk]),
        ],
        admin: [
            reverse("engagement-catalog", args=[engagement.pk]),
            reverse("engagement-catalog-retire", args=[engagement.pk, clause_type.pk]),
            reverse("engagement-new"),
            reverse("bulk:new", args=[engagement.pk]),
            reverse("engagement-members", args=[engagement.pk]),
            reverse("engagement", args=[engagement.pk]),
        ],
        manager: [reverse("dashboards:benchmarks"), reverse("dashboards:index")],
    }
    for user, urls in pages.items():
        client.force_login(user)
        for url in urls:
            response = client.get(url)
            assert response.status_code == 200, url
            html = response.content.decode()
            assert dangling_references(html) == [], url
    assert 'id="id_limit_helptext"' in client.get(reverse("dashboards:benchmarks")).content.decode()
    client.force_login(admin)  # the clause type boxes are one group, described by the text above them
    assert (
        'aria-describedby="id_clause_types_helptext"'
        in client.get(reverse("bulk:new", args=[engagement.pk])).content.decode()
    )
