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


@pytest.mark.django_db
def test_payment_takes_the_wording_that_names_rent_unless_an_admin_wrote_their_own():
    _migrate("0009_clause_type_name_per_engagement")
    payment = ClauseType.objects.get(name="Payment", engagement=None)
    payment.query = (  # the built-in wording before rent was named
        "shall pay a fee price amount per month payable invoice payment due within days of receipt currency "
        "taxes reimbursement of expenses"
    )
    payment.description = "What the client pays us, and when."  # an admin's own words
    payment.save()
    _migrate("0010_payment_names_rent")
    payment.refresh_from_db()
    assert payment.query == catalog.get("Payment").query and " rent " in payment.query
    assert payment.description == "What the client pays us, and when."
