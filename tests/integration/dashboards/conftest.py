"""Fixtures of the dashboard tests: the engagement's people, the reviewed fixture, a corpus under the
configured roots, a run imported from it, and another engagement with a review of its own.
"""

from __future__ import annotations

import pytest

from dashboards import benchmarks
from dashboards.models import BenchmarkRun
from engagements.models import Engagement
from extraction.models import ExtractionRun
from tests.integration.dashboards.builders import (
    build_reviews,
    document,
    extraction,
    review,
    write_corpus,
    write_predictions,
)


@pytest.fixture
def people(engagement, make_member):
    return {
        "manager": make_member(engagement, "manager", "manny"),
        "admin": make_member(engagement, "admin", "ada"),
        "auditor": make_member(engagement, "auditor", "audrey"),
    }


@pytest.fixture
def data(engagement, people):
    return build_reviews(engagement, people["auditor"])


@pytest.fixture
def corpus(tmp_path, settings):
    settings.DASHBOARDS = {"CORPUS_ROOTS": [str(tmp_path)], "RUNS_DIR": str(tmp_path / "runs")}
    return write_corpus(tmp_path / "mini-cuad")


@pytest.fixture
def imported_run(corpus, tmp_path):
    bset = benchmarks.import_set(corpus)
    run = benchmarks.new_run(bset, engine="offline", trigger=BenchmarkRun.Trigger.IMPORT)
    return benchmarks.import_existing(run, write_predictions(tmp_path / "out"))


@pytest.fixture
def other(make_member, people):
    other = Engagement.objects.create(name="Other audit", client="Other")
    stranger = make_member(other, "auditor", "olga")
    ext_run = ExtractionRun.objects.create(engagement=other, engine="offline", status="done")
    doc = document(other, "Other MSA", "Services")
    review(extraction(ext_run, doc, "Governing Law", "found", 3), stranger, "reject")
    return other
