"""A real Celery worker in a child process, pointed at the test database.

Used by integration tests: tasks go through the real embedded Redis broker and
the worker writes to the same PostgreSQL test database the test reads.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


def test_database_url() -> str:
    s = connection.settings_dict
    host = s.get("HOST") or ""
    user = s.get("USER") or "postgres"
    password = s.get("PASSWORD") or ""
    port = s.get("PORT") or ""
    user, password = quote(str(user), safe=""), quote(str(password), safe="")  # '@', ':', '/' in a password
    if host.startswith("/"):
        return f"postgresql://{user}:{password}@{quote(host, safe='')}/{s['NAME']}"
    return f"postgresql://{user}:{password}@{host}:{port or 5432}/{s['NAME']}"


class WorkerProcess:
    def __init__(
        self,
        name: str = "w1",
        concurrency: int = 1,
        log_path: Path | None = None,
        env: dict[str, str] | None = None,
        queues: list[str] | None = None,
    ):
        self.name = f"{name}-{os.getpid()}"
        self.env = dict(env or {})  # extra environment for the worker (e.g. CELERY_VISIBILITY_TIMEOUT)
        self.concurrency = concurrency
        self.queues = queues or []  # empty: the default queue (CELERY_TASK_DEFAULT_QUEUE)
        self.log_path = log_path or Path(os.environ["EMBEDDED_DIR"]) / f"worker-{name}.log"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> WorkerProcess:
        env = dict(
            os.environ,
            DATABASE_URL=test_database_url(),
            DJANGO_SETTINGS_MODULE="config.settings_test",
            **self.env,
        )
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--loglevel=INFO",
                "--pool=prefork",
                f"--concurrency={self.concurrency}",
                "--without-gossip",
                "--without-mingle",
                "-n",
                f"{self.name}@%h",
                *([f"--queues={','.join(self.queues)}"] if self.queues else []),
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._wait_ready(timeout)
        return self

    def _wait_ready(self, timeout: float) -> None:
        from config.celery import app

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"Celery worker exited early:\n{self.log_tail()}")
            replies = app.control.ping(timeout=0.5) or []
            if any(self.name in key for reply in replies for key in reply):
                return
            time.sleep(0.2)
        raise RuntimeError(f"Celery worker not ready after {timeout}s:\n{self.log_tail()}")

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except FileNotFoundError:
            return ""

    def kill(self) -> None:
        """SIGKILL the whole process group (main process and pool children), as a crash would."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
