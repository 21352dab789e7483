"""The fast lane is honest: a test in tests/unit that touches the database or Redis fails, loudly, whether or
not the services run already, and reading the settings starts no service (tests/unit/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis

ROOT = Path(__file__).resolve().parents[2]
FAILED = pytest.fail.Exception


def test_the_orm_without_a_database_mark_is_refused():
    from django.contrib.auth.models import User

    with pytest.raises(RuntimeError, match="Database access not allowed"):
        User.objects.count()


def test_asking_for_the_database_fails_the_test(request):
    with pytest.raises(FAILED, match="needs no services: a test that uses the database"):
        request.getfixturevalue("db")


def test_the_cache_fails_the_test_instead_of_reaching_redis():
    from django.core.cache import cache

    with pytest.raises(FAILED, match="needs no services: a test that uses (the embedded redis|Redis)"):
        cache.get("anything")


def test_sending_a_task_fails_the_test_instead_of_reaching_redis():
    from taskstate.tasks import purge_old_states

    with pytest.raises(FAILED, match="needs no services: a test that uses (the embedded redis|Redis)"):
        purge_old_states.delay()


def test_a_redis_pool_that_is_already_open_is_refused_too():
    # in the whole suite the integration tests ran first: their pools hold open connections
    with pytest.raises(FAILED, match="a test that uses Redis"):
        redis.Redis(unix_socket_path="/nonexistent/redis.sock").ping()


def test_importing_the_settings_starts_no_service(tmp_path):
    folder = tmp_path / "services"
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    env["EMBEDDED_DIR"] = str(folder)
    code = (
        "import config.settings as s; "
        "print(s.DATABASES['default']['ENGINE'], s.EMBEDDED_SERVICES, s.DATABASE_URL, s.REDIS_URL)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    ).stdout
    assert out.split()[:3] == ["config.embedded_postgres", "['postgres',", "'redis']"], out
    assert str(folder).replace("/", "%2F") in out and f"{folder}/redis/redis.sock" in out  # URLs known ...
    assert not folder.exists()  # ... and nothing started: no data folder, no socket, no lock
