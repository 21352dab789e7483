"""Test settings: a throw-away embedded PostgreSQL + Redis per test session.

Each pytest process gets its own folder ``var/test/run-<pid>`` (so parallel runs
never share a database or a queue); the Celery worker the tests start inherits
``EMBEDDED_DIR`` from the environment and so talks to the same services. A service
starts there when a test first connects to it, so a run of tests/unit starts none.
"""

import os
from pathlib import Path

_base = Path(__file__).resolve().parent.parent
os.environ.setdefault("EMBEDDED_DIR", str(_base / "var" / "test" / f"run-{os.getpid()}"))
os.environ.setdefault("MEDIA_ROOT", os.path.join(os.environ["EMBEDDED_DIR"], "media"))
os.environ.setdefault("CACHE_PREFIX", f"test{os.getpid()}")
os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("SECURE_COOKIES", "0")

from config.settings import *  # noqa: E402,F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests
LOGIN_THROTTLE_LIMIT = 5
