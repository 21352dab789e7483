"""The test Celery worker reaches the same test database, whatever DATABASE_URL's password holds."""

import dj_database_url
from django.db import connections

from tests.worker import test_database_url as worker_database_url


def test_an_external_database_password_with_url_characters_reaches_the_worker_intact(monkeypatch):
    # The wrapper itself, not the ``connection`` proxy: monkeypatch finds no ``settings_dict`` in the proxy's
    # own __dict__, so its undo would delete the wrapper's and break the test database's teardown.
    connection = connections["default"]
    monkeypatch.setattr(
        connection,
        "settings_dict",
        dict(
            connection.settings_dict,
            HOST="db.internal",
            PORT=5433,
            USER="review@corp",
            PASSWORD="p@ss:w/rd#1?",
            NAME="test_review",
        ),
    )
    parsed = dj_database_url.parse(worker_database_url())
    assert (parsed["HOST"], parsed["PORT"], parsed["USER"], parsed["PASSWORD"], parsed["NAME"]) == (
        "db.internal",
        5433,
        "review@corp",
        "p@ss:w/rd#1?",
        "test_review",
    )
