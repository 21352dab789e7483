"""bench/bench_bulk.py's build section on a few synthetic contracts: what it submits is really sent."""

from __future__ import annotations

import pytest

from bulk.models import BatchItem

pytestmark = pytest.mark.django_db


def test_build_section_submits_every_request_in_batches():
    from bench.bench_bulk import bench_build

    figures = bench_build(2, 1)
    submitted = figures["submit_end_to_end"]
    assert figures["requests"] == 2
    assert submitted["batches"] >= 1 and figures["job_ids"]
    assert BatchItem.objects.filter(run_id=figures["run_id"], state=BatchItem.State.SUBMITTED).count() == 2
    assert not BatchItem.objects.filter(run_id=figures["run_id"], state=BatchItem.State.FAILED).exists()
