"""A local stack (:mod:`bench.faults.supervise`) in a throw-away folder with its own port: started,
stopped, its processes found by what they run, and killed with SIGKILL as a crash would."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalStack:
    def __init__(
        self, root: Path, *, visibility_timeout: int, requeue_after: int, worker_concurrency: int = 2
    ):
        self.root = root
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = root / "stack.log"
        self.runner: subprocess.Popen | None = None
        self.env = {
            key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")
        } | {
            "EMBEDDED_DIR": str(root / "var"),
            "MEDIA_ROOT": str(root / "media"),
            "PORT": str(self.port),
            "HOST": "127.0.0.1",
            "CACHE_PREFIX": f"faults{os.getpid()}",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DEBUG": "0",
            "SECURE_COOKIES": "0",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "EXTRACTION_ENGINE": "offline",
            "ANTHROPIC_API_KEY": "",
            "HF_HUB_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "LOG_LEVEL": "INFO",
            "WORKER_CONCURRENCY": str(worker_concurrency),
            # a killed worker's message comes back after this many seconds (production: 3,700 s, past the hour a
            # stage may run), and a queued document that no task holds is sent again after this many
            "CELERY_VISIBILITY_TIMEOUT": str(visibility_timeout),
            "REQUEUE_UNSENT_AFTER": str(requeue_after),
        }

    # ------------------------------------------------------------------ start / stop

    def start(self, timeout: float = 240) -> float:
        """Start the stack; the seconds until its sign-in page answers 200."""
        started = time.monotonic()
        log = open(self.log_path, "ab")
        self.runner = subprocess.Popen(
            [sys.executable, "-m", "bench.faults.supervise"],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.wait_serving(timeout)
        return time.monotonic() - started

    def serving(self) -> bool:
        try:
            return httpx.get(f"{self.base}/accounts/login/", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def wait_serving(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.serving():
            if self.runner is not None and self.runner.poll() is not None:
                raise RuntimeError(f"the stack exited ({self.runner.returncode}):\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the stack did not serve within {timeout}s:\n{self.log_tail()}")
            time.sleep(0.2)

    def wait_runner(self, timeout: float = 120) -> int | None:
        if self.runner is None:
            return None
        try:
            return self.runner.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        """SIGTERM the supervisor (it stops its children and the embedded services), then make sure."""
        if self.runner is not None and self.runner.poll() is None:
            self.runner.send_signal(signal.SIGTERM)
            if self.wait_runner(150) is None:
                os.killpg(self.runner.pid, signal.SIGKILL)
                self.runner.wait(10)
        for proc in self.processes().values():  # a child left behind by a runner that was killed
            if proc.is_running():
                proc.kill()
        from config import embedded

        embedded.stop_all(self.root / "var")

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except FileNotFoundError:
            return ""

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    # ------------------------------------------------------------------ processes

    def processes(self) -> dict[str, psutil.Process]:
        """The supervisor's children by the name the supervisor gives them: web, worker, worker-large, beat."""
        if self.runner is None:
            return {}
        try:
            children = psutil.Process(self.runner.pid).children()
        except psutil.Error:
            return {}
        found = {}
        for child in children:
            try:
                line = " ".join(child.cmdline())
            except psutil.Error:
                continue
            if "gunicorn" in line:
                found["web"] = child
            elif " beat" in line:
                found["beat"] = child
            elif "-n large@" in line:
                found["worker-large"] = child
            elif "-n worker@" in line:
                found["worker"] = child
            elif "seed_demo" not in line:
                found[line[:40]] = child
        return found

    def worker_children(self) -> list[psutil.Process]:
        """The pool processes of both workers (where the tasks run)."""
        out = []
        for name, proc in self.processes().items():
            if name.startswith("worker"):
                try:
                    out.extend(proc.children())
                except psutil.Error:
                    pass
        return out

    def redis_pid(self) -> int | None:
        try:
            return int((self.root / "var" / "redis" / "redis.pid").read_text().strip())
        except (FileNotFoundError, ValueError):
            return None

    def kill(self, target: str) -> list[int]:
        """SIGKILL ``target``: ``worker`` (its main process and pool, as a crash or the OOM killer would),
        ``beat``, ``web`` (gunicorn's main process), ``web-worker`` (one gunicorn worker), ``redis``."""
        procs = self.processes()
        if target == "redis":
            pid = self.redis_pid()
            assert pid, "no Redis pid"
            os.kill(pid, signal.SIGKILL)
            return [pid]
        if target == "web-worker":
            child = procs["web"].children()[0]
            child.kill()
            return [child.pid]
        proc = procs[target]
        pids = [proc.pid] + [c.pid for c in proc.children(recursive=True)]
        os.killpg(proc.pid, signal.SIGKILL)  # each child of the supervisor leads a session of its own
        return pids
