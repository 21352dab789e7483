"""tests/unit holds the pure cores: tests that need no database, no Redis and no browser.

`make test-fast` runs this folder alone, in seconds, with no service started. That holds by
construction, in the fast lane and in the whole suite alike (where the services already run for the
other folders): a test here that asks for the database fails at once, the ORM without a database mark
is refused (pytest-django blocks it), and any Redis command (cache, broker) or the start of an embedded
service fails the test. A test that needs any of them belongs in tests/integration.
"""

from __future__ import annotations

import pytest
import redis

from config import embedded

NO_SERVICES = "tests/unit needs no services: a test that uses {what} belongs in tests/integration"


@pytest.fixture(scope="session")
def django_db_setup():
    """The test database of the other folders; here, asking for it (``db``, ``django_db``) fails."""
    pytest.fail(NO_SERVICES.format(what="the database"), pytrace=False)


@pytest.fixture
def services_root():
    pytest.fail(NO_SERVICES.format(what="services of its own"), pytrace=False)


@pytest.fixture(autouse=True)
def _refuse_services(monkeypatch):
    """Starting an embedded service (config.embedded.ensure: the ORM, the cache, Celery) and taking a
    connection from any redis-py pool (the cache's and the broker's, embedded or not, already open or
    not) fail the test, loudly. ``pytest.fail`` raises a BaseException, which no retry loop of Celery,
    kombu or redis-py catches."""

    def refuse_start(service: str):
        pytest.fail(NO_SERVICES.format(what=f"the embedded {service}"), pytrace=False)

    def refuse_redis(*_args, **_kwargs):
        pytest.fail(NO_SERVICES.format(what="Redis"), pytrace=False)

    monkeypatch.setattr(embedded, "ensure", refuse_start)
    for pool in (redis.ConnectionPool, redis.BlockingConnectionPool):
        monkeypatch.setattr(pool, "get_connection", refuse_redis)
