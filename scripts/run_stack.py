"""`make run`: migrate, load demo data, then serve the app with a Celery worker and beat.

Embedded PostgreSQL+pgvector and Redis start on first use when DATABASE_URL /
REDIS_URL are unset (see config/embedded.py). Ctrl-C stops every process and the
embedded services; data stays in var/ for the next run.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    os.chdir(ROOT)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SECURE_COOKIES", "0")  # plain http on loopback
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    embedded = not os.environ.get("DATABASE_URL") or not os.environ.get("REDIS_URL")

    import django
    from django.conf import settings
    from django.core.management import call_command

    started = time.monotonic()
    django.setup()  # starts the embedded services if needed
    # Children reuse the running services instead of checking for them again.
    os.environ["DATABASE_URL"] = settings.DATABASE_URL
    os.environ["REDIS_URL"] = settings.REDIS_URL
    call_command("migrate", interactive=False, verbosity=0)
    call_command("seed_demo")

    host, port = os.environ.get("HOST", "127.0.0.1"), os.environ.get("PORT", "8000")
    python = sys.executable
    commands = {
        "web": [python, "-m", "gunicorn", "config.wsgi", "-b", f"{host}:{port}", "-w", "2", "--threads", "4",
                "--access-logfile", "-", "--graceful-timeout", "10"],
        "worker": [python, "-m", "celery", "-A", "config", "worker", "--loglevel=INFO",
                   f"--concurrency={os.environ.get('WORKER_CONCURRENCY', '2')}", "-n", "worker@%h"],
        "beat": [python, "-m", "celery", "-A", "config", "beat", "--loglevel=INFO"],
    }
    children = {name: subprocess.Popen(cmd, cwd=ROOT) for name, cmd in commands.items()}
    # One-shot: once the demo documents are ingested, extract their clauses (first run only).
    helper = subprocess.Popen([python, "manage.py", "seed_demo", "--extract"], cwd=ROOT)
    print(f"\n  Clause Review is starting on http://{host}:{port}/  (set up in {time.monotonic() - started:.1f}s)")
    print("  Press Ctrl-C to stop everything.\n", flush=True)

    stopping = {"flag": False}

    def stop(*_):
        stopping["flag"] = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    exit_code = 0
    while not stopping["flag"]:
        for name, child in children.items():
            if child.poll() is not None:
                print(f"{name} exited with code {child.returncode}; stopping the rest.", file=sys.stderr)
                exit_code = 1
                stopping["flag"] = True
        time.sleep(0.5)

    for child in [helper, *children.values()]:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    for name, child in children.items():
        try:
            child.wait(30)
        except subprocess.TimeoutExpired:
            print(f"{name} did not stop in time; killing it.", file=sys.stderr)
            child.kill()
    if embedded:
        from config import embedded as services

        services.stop_all(settings.EMBEDDED_DIR)
    print("Stopped. Data is kept in var/ for the next `make run`.")
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
