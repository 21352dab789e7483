"""The catalog's data migration, forwards and backwards, on the real database."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

from extraction import catalog
from extraction.models import ClauseTask, ClauseType, Extraction, ExtractionRun
from tests.factories import make_reviewable


def _migrate(target: str) -> None:
    with connection.cursor() as cursor:  # rows written by the test are checked now, before the schema changes
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    call_command("migrate", "extraction", target, verbosity=0)


@pytest.mark.django_db
def test_unseeding_keeps_the_types_a_run_has_tasks_for_and_seeding_again_restores_the_rest(engagement):
    contract = make_reviewable(engagement)
    queued = ExtractionRun.objects.create(engagement=engagement, engine="offline")
    audit = ClauseType.objects.get(name="Audit Rights")  # queued, not extracted yet: a task but no extraction
    ClauseTask.objects.create(run=queued, document=contract.document, clause_type=audit)

    _migrate("0001")
    kept = set(ClauseType.objects.values_list("name", flat=True))
    extracted = set(Extraction.objects.values_list("clause_type__name", flat=True))
    assert kept == extracted | {"Audit Rights"}
    _migrate("0004")
    assert set(catalog.names()) <= set(ClauseType.objects.values_list("name", flat=True))
    assert ClauseTask.objects.get(run=queued).clause_type_id == audit.pk
