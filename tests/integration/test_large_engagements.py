"""Pages that must stay fast as an engagement grows (many documents, runs and extracted clauses),
checked on the real embedded PostgreSQL by what its planner actually executes."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.factories import ensure_clause_types, make_reviewable

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def _subplan_loops(sql: str) -> list[int]:
    """How many times each correlated subquery (SubPlan) of ``sql`` ran, per EXPLAIN ANALYZE."""
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    loops, todo = [], [plan[0]["Plan"]]
    while todo:
        node = todo.pop()
        if node.get("Parent Relationship") == "SubPlan":
            loops.append(node["Actual Loops"])
        todo.extend(node.get("Plans", []))
    return loops


def test_documents_table_counts_open_clause_tasks_once_per_document_not_per_clause(
    client, engagement, make_member
):
    """The table polls itself every 2 s while anything is extracting; its "clause types to go" count was a
    subquery PostgreSQL ran once per extracted clause (and review) of the engagement, each time over
    every run: 100 documents x 92 clauses x 200 runs took over a second a poll."""
    from extraction.models import ClauseTask, ExtractionRun

    client.force_login(make_member(engagement, "auditor"))
    documents = [make_reviewable(engagement, title=f"Contract {i}", seed=i).document for i in range(3)]
    types = list(ensure_clause_types().values())
    for _ in range(4):  # earlier runs of the app, finished
        run = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
        ClauseTask.objects.bulk_create(
            [ClauseTask(run=run, document=d, clause_type=t, status="done") for d in documents for t in types]
        )
    running = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="running")
    ClauseTask.objects.bulk_create(
        [ClauseTask(run=running, document=documents[0], clause_type=t) for t in types[:3]]
    )

    with CaptureQueriesContext(connection) as queries:
        html = client.get(reverse("engagement-documents", args=[engagement.pk]), **HX).content.decode()

    assert "3 clause types to go" in html and html.count("to go") == 1
    assert html.count("5 found") == 3 and 'data-polling="true"' in html
    for query in queries.captured_queries:
        if query["sql"].lstrip().upper().startswith("SELECT"):
            loops = _subplan_loops(query["sql"])
            assert all(n <= len(documents) for n in loops), (loops, query["sql"][:300])


@pytest.mark.django_db(transaction=True)
def test_a_batch_upload_finishes_its_documents_one_after_another(celery_worker, engagement, tmp_path):
    """Four contracts uploaded together, one worker: each goes convert → chunk → embed → index before the
    next one starts, so the first can be reviewed while the rest are processed. Before, the queue ran every
    convert, then every chunk, then every embed: the first was ready only after the others were embedded."""
    import time

    from bulk.tasks import poll_batches
    from demo import make_contract_pdf
    from ingest.intake import intake_file
    from ingest.models import DocumentStage
    from taskstate.models import TaskState
    from tests.integration.ingest_helpers import wait_terminal

    paths = [make_contract_pdf(tmp_path / f"contract-{i}.pdf", pages=12, seed=20 + i).path for i in range(4)]
    documents = [intake_file(engagement, path, filename=path.name).document for path in paths]
    other = poll_batches.delay()  # any other task sent meanwhile (a run's extraction, the beat's polls)
    assert all(d.status == "ready" for d in wait_terminal(documents, timeout=300, worker=celery_worker))

    ran = list(
        DocumentStage.objects.filter(document__in=documents)
        .order_by("started_at")
        .values_list("document_id", "name")
    )
    assert ran == [(d.pk, name) for d in documents for name in ("convert", "chunk", "embed", "index")], ran
    # ... keeps its turn: it goes after the uploads sent before it, not ahead of them
    deadline = time.monotonic() + 60
    # (until it has finished: a task still running when the test's tables are flushed deadlocks the flush)
    while not TaskState.objects.filter(task_id=other.id, finished_at__isnull=False).exists():
        assert time.monotonic() < deadline, "the other task never ran"
        time.sleep(0.5)
    last_convert = DocumentStage.objects.filter(document__in=documents, name="convert").latest("started_at")
    assert TaskState.objects.get(task_id=other.id).started_at > last_convert.started_at
