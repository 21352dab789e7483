"""Shared fixtures. The services are real: embedded PostgreSQL+pgvector and Redis
(see config/settings_test.py), and a real Celery worker process for integration tests.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.worker import WorkerProcess

CUAD_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "eval" / "cuad-dev"
CUAD_TRAIN_DIR = CUAD_DIR.parent / "cuad-train"
TEST_ROOT = Path(__file__).resolve().parent.parent / "var" / "test"


def pytest_sessionstart(session):
    """Remove folders of earlier test sessions that died without cleaning up."""
    from config import embedded

    if not TEST_ROOT.exists():
        return
    for folder in TEST_ROOT.glob("run-*"):
        pid = int(folder.name.split("-", 1)[1]) if folder.name.split("-", 1)[1].isdigit() else 0
        if pid and pid != os.getpid() and not _alive(pid):
            embedded.remove(folder)


def pytest_sessionfinish(session, exitstatus):
    from config import embedded

    folder = Path(os.environ.get("EMBEDDED_DIR", ""))
    if (
        folder.parent == TEST_ROOT
        and folder.name == f"run-{os.getpid()}"
        and not os.environ.get("KEEP_TEST_SERVICES")
    ):
        embedded.remove(folder)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, django_db_blocker):
    """A real Celery worker consuming from the embedded Redis and writing to the test database, and one for the
    queue of very large documents (``INGEST_LARGE_QUEUE``), as ``make run`` and docker-compose.yml start."""
    from django.conf import settings

    with django_db_blocker.unblock():
        worker = WorkerProcess("main", concurrency=1).start()
        large = WorkerProcess("large", concurrency=1, queues=[settings.INGEST_LARGE_QUEUE]).start()
    yield worker
    large.stop()
    worker.stop()


@pytest.fixture
def services_root(request) -> Path:
    """A fresh folder for a test's own embedded services, inside this session's folder (var/test/run-<pid>)
    rather than pytest's temporary root: a pytest run started meanwhile resets that root to mode 0700,
    which the unprivileged user PostgreSQL runs as (when tests run as root) can then not cross."""
    from config import embedded

    folder = Path(os.environ["EMBEDDED_DIR"]) / "own" / f"{request.node.name[:40]}-{os.urandom(3).hex()}"
    folder.mkdir(parents=True)
    yield folder
    embedded.remove(folder)


@pytest.fixture
def cuad_dir() -> Path:
    if not CUAD_DIR.exists():
        pytest.skip("../shared/eval/cuad-dev is absent (only CI and developer machines have it)")
    return CUAD_DIR


@pytest.fixture
def cuad_train_dir() -> Path:
    if not CUAD_TRAIN_DIR.exists():
        pytest.skip("../shared/eval/cuad-train is absent (only CI and developer machines have it)")
    return CUAD_TRAIN_DIR


@pytest.fixture
def make_member(db, django_user_model):
    """make_member(engagement, role, username=None) -> a user with that role in that engagement."""
    from engagements.models import Membership

    counter = {"n": 0}

    def make(engagement, role, username=None):
        counter["n"] += 1
        user = django_user_model.objects.create_user(
            username=username or f"{role}{counter['n']}-{engagement.pk}", password="pw-for-tests-1"
        )
        Membership.objects.create(user=user, engagement=engagement, role=role)
        return user

    return make


@pytest.fixture
def engagement(db):
    from engagements.models import Engagement

    return Engagement.objects.create(
        name="Acme audit 2026", client="Acme", policy_facts={"policy_cap": "$247.83"}
    )


@pytest.fixture
def contract(engagement):
    """A reviewable contract of the engagement: six pages, clauses extracted and cited (tests.factories)."""
    from tests.factories import make_reviewable

    return make_reviewable(engagement)
