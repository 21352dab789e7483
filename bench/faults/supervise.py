"""The local stack of `make run` on the services folder of ``EMBEDDED_DIR``, without the demo data: the
embedded PostgreSQL and Redis, migrations, then the web, workers and beat of ``scripts/run_stack.py``
(its command lines and its supervisor, :class:`Stack`, which restarts a worker, the beat or a web that had
served when it exits), until SIGTERM. ``bench_faults`` runs it in a throw-away folder.

Usage: ``EMBEDDED_DIR=... MEDIA_ROOT=... PORT=... python -m bench.faults.supervise``
"""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_stack_module():
    spec = importlib.util.spec_from_file_location("run_stack", ROOT / "scripts" / "run_stack.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    run_stack = run_stack_module()
    os.chdir(ROOT)
    folder = run_stack.services_dir()
    lock = run_stack.claim(folder)
    if lock is None:
        print(f"a stack already runs from {folder}", file=sys.stderr)
        return 1
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    embedded = not os.environ.get("DATABASE_URL") or not os.environ.get("REDIS_URL")
    import django
    from django.conf import settings
    from django.core.management import call_command

    from config import embedded as services

    django.setup()
    os.environ["DATABASE_URL"] = services.ensure("postgres") or settings.DATABASE_URL
    os.environ["REDIS_URL"] = services.ensure("redis") or settings.REDIS_URL
    call_command("migrate", interactive=False, verbosity=0)
    host, port = os.environ.get("HOST", "127.0.0.1"), os.environ["PORT"]
    stack = run_stack.Stack(run_stack.stack_commands(sys.executable, host, port, folder))
    redis_watch = (
        run_stack.RedisWatch(settings.EMBEDDED_DIR) if "redis" in settings.EMBEDDED_SERVICES else None
    )
    stopping = {"flag": False}

    def request_stop(*_):
        stopping["flag"] = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    code = 0
    while not stopping["flag"]:
        ended = stack.check()
        if ended is not None:
            code = ended
            break
        if redis_watch is not None:
            redis_watch.check()
        time.sleep(0.5)
    stack.stop()
    if embedded:
        services.stop_all(settings.EMBEDDED_DIR)
    return code


if __name__ == "__main__":
    sys.exit(main())
