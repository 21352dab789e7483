"""The embedded services start when a process first connects to them, each on its own: setting Django
up starts nothing, the broker's first connection starts Redis, the first query starts PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, os, sys
from pathlib import Path
import django

os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
root = Path(os.environ["EMBEDDED_DIR"])
running = lambda: {"postgres": (root / "pg" / "postmaster.pid").exists(),
                   "redis": (root / "redis" / "redis.pid").exists()}
seen = {}
django.setup()
seen["setup"] = running()
from django.core.cache import cache
from config.celery import app
with app.connection_for_write() as broker:
    broker.ensure_connection(max_retries=1)
cache.set("first-use", "yes")
seen["broker and cache"] = running()
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute("SELECT 1")
seen["query"] = running()
seen["cache"] = cache.get("first-use")
print(json.dumps(seen))
"""


def test_each_embedded_service_starts_at_its_first_connection(services_root):
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    env.update(EMBEDDED_DIR=str(services_root), HF_HUB_OFFLINE="1")
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {
        "setup": {"postgres": False, "redis": False},
        "broker and cache": {"postgres": False, "redis": True},
        "query": {"postgres": True, "redis": True},
        "cache": "yes",
    }
