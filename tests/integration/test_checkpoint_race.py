"""Two workers on one document (a message redelivered while its first worker still runs) both write
the document's first checkpoint: neither may fail on the one-checkpoint-per-(run, document) rule."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from extraction import checkpoints, launch
from extraction.models import Checkpoint
from tests.integration.extraction_fixtures import clause_types, make_contract


@pytest.mark.django_db(transaction=True)
def test_two_workers_saving_a_documents_first_checkpoint_at_once_both_succeed(engagement, monkeypatch):
    document = make_contract(engagement)
    run = launch.create_run(
        engagement, documents=[document], clause_types=clause_types(), engine="offline", enqueue=False
    )
    both_read = threading.Barrier(2, timeout=3)  # each found no checkpoint before either wrote one
    real_facts = checkpoints.facts_for

    def facts_for(*args):
        try:
            both_read.wait()
        except threading.BrokenBarrierError:  # the other one waits on our row: go on alone
            pass
        return real_facts(*args)

    monkeypatch.setattr(checkpoints, "facts_for", facts_for)
    errors, saved = [], []

    def worker(n: int) -> None:
        try:
            saved.append(checkpoints.save(run, document, {"position": {"worker": n}}, last_record={"by": n}))
        except Exception as exc:  # noqa: BLE001 - the failure is what the test reports
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(n,)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    assert len(saved) == 2
    row = Checkpoint.objects.get(run=run, document=document)
    assert row.last_record["by"] in (1, 2) and row.position == {"worker": row.last_record["by"]}
