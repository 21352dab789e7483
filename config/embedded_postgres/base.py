"""The embedded PostgreSQL's backend: Django's own, with the server started before a connection opens.

The settings hold the URL the server answers at (known before it runs). Opening a connection, or
``manage.py dbshell``, first makes sure the server runs (:func:`config.embedded.ensure`, once per process)
and takes the socket folder from the running server, so a connection reaches it wherever it listens.
"""

from __future__ import annotations

import dj_database_url
from django.db.backends.postgresql import base, client

from config import embedded


def _start(settings_dict: dict) -> None:
    url = embedded.ensure("postgres")
    if url:
        settings_dict["HOST"] = dj_database_url.parse(url)["HOST"]


class DatabaseClient(client.DatabaseClient):
    def runshell(self, parameters):
        _start(self.connection.settings_dict)
        super().runshell(parameters)


class DatabaseWrapper(base.DatabaseWrapper):
    client_class = DatabaseClient

    def get_connection_params(self):
        _start(self.settings_dict)
        return super().get_connection_params()
