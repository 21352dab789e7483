"""What a document may cost, bounded before its costly stages: pages and characters after conversion, chunks
before embedding, each refused in words naming its limit. A very large document is embedded and indexed on a
queue of its own, served by its own worker, so two of them cannot hold every worker the other uploads need."""

from __future__ import annotations

import os

import pytest

from config.celery import app
from ingest import pipeline
from ingest.intake import intake_file
from ingest.models import Chunk, Document
from taskstate.models import TaskState
from tests.integration.ingest_helpers import assert_consistent, stage, wait_terminal
from tests.worker import WorkerProcess

pytestmark = pytest.mark.django_db(transaction=True)


def _contract(tmp_path, name: str, sections: int):
    path = tmp_path / name
    path.write_text(
        "\n\n".join(
            f"## {n}. Clause {n}\n\n"
            + f"The Supplier shall deliver lot {n} to the Buyer within {n} days. " * 25
            for n in range(1, sections + 1)
        )
    )
    return path


@pytest.mark.parametrize(
    ("limit", "value", "said"),
    [
        ("MAX_DOCUMENT_PAGES", 10, "has 12 pages; the limit is 10 pages"),
        ("MAX_DOCUMENT_CHARS", 1000, "characters; the limit is 1,000 characters"),
        ("MAX_DOCUMENT_CHUNKS", 4, "chunks; the limit is 4 chunks"),
    ],
)
def test_a_document_over_a_work_limit_is_refused_in_words_before_it_is_embedded(
    engagement, tmp_path, settings, limit, value, said
):
    from demo import make_contract_pdf

    setattr(settings, limit, value)
    truth = make_contract_pdf(tmp_path / "msa.pdf", pages=12, seed=3)
    document = intake_file(engagement, truth.path, filename="msa.pdf", enqueue=False).document
    assert not pipeline.run_pipeline(document.pk)
    document.refresh_from_db()
    assert (document.status, document.error_code) == ("failed", "too_large"), document.error
    assert said in document.error and limit in document.error and "Split it" in document.error
    assert not Chunk.objects.filter(document=document).exists()
    failed_at = "chunk" if limit == "MAX_DOCUMENT_CHUNKS" else "convert"
    assert stage(document, failed_at).status == "failed" and stage(document, "embed").status == "pending"


def test_a_very_large_document_is_embedded_on_its_own_queue_by_its_own_worker(
    engagement, tmp_path, monkeypatch
):
    queue, large = f"lanes-{os.getpid()}", f"lanes-large-{os.getpid()}"
    monkeypatch.setitem(app.conf, "task_default_queue", queue)  # only this test's workers take its messages
    env = {"CELERY_TASK_DEFAULT_QUEUE": queue, "INGEST_LARGE_QUEUE": large, "LARGE_DOCUMENT_CHUNKS": "30"}
    workers = [
        WorkerProcess("lane-main", env=env).start(),
        WorkerProcess("lane-large", env=env, queues=[large]).start(),
    ]
    try:
        big = intake_file(engagement, _contract(tmp_path, "big.md", 45), filename="big.md").document
        small = intake_file(engagement, _contract(tmp_path, "small.md", 3), filename="small.md").document
        big, small = wait_terminal([big, small], worker=workers[1])
        assert_consistent(big) and assert_consistent(small)
        assert big.chunks.count() > 30 >= small.chunks.count()
        ran_on = {  # (task, document id) -> the worker that ran it ("lane-large-<pid>@host")
            (name, args.strip("[](),")): worker.split("@")[0].rsplit("-", 1)[0]
            for name, args, worker in TaskState.objects.filter(name__startswith="ingest.").values_list(
                "name", "args", "worker"
            )
        }
        for document, lane in ((big, "lane-large"), (small, "lane-main")):
            assert ran_on[("ingest.embed", str(document.pk))] == lane, ran_on
            assert ran_on[("ingest.index", str(document.pk))] == lane, ran_on
        assert ran_on[("ingest.convert", str(big.pk))] == "lane-main"  # the lanes part after chunking
    finally:
        for worker in workers:
            worker.stop()
    assert Document.objects.filter(status="ready").count() == 2
