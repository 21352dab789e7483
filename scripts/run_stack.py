"""`make run`: migrate, load demo data, then serve the app with a Celery worker and beat.

Embedded PostgreSQL+pgvector and Redis (used when DATABASE_URL / REDIS_URL are
unset, see config/embedded.py) start before the app does. Ctrl-C (or `make stop`,
which runs this script with ``stop``) stops every process and the embedded services;
data stays in var/ for the next run. One run per services folder: a second one says
so and leaves the first alone.

A worker or the beat that exits (a crash, killed for its memory) is started again after a back-off
that doubles from :data:`FIRST_DELAY_S` to at most :data:`MAX_DELAY_S` while it keeps dying, logged each
time (:class:`Stack`); the web keeps serving meanwhile. The web (gunicorn's main process; gunicorn restarts
its own workers) is started again the same way when it had served for :data:`WEB_STARTED_S`; one that exits
sooner cannot start (the port taken, a broken setting), and that stops the run with its message.
The embedded Redis (when the run uses it) is watched too: one that stops answering is started again from
its folder, whose append-only file keeps the queued tasks (:class:`RedisWatch`); the web, workers and beat
are given its URL, so none of them starts it themselves.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
RUN_FILE = "run.pid"  # in the services folder; locked by the running `make run`, holds its pid
# gunicorn's control socket, in the services folder: its default (~/.gunicorn/gunicorn.ctl, one per user)
# is shared by every stack on the machine, and two stacks clash over it
CONTROL_SOCKET = "gunicorn.ctl"


def services_dir() -> Path:
    """The embedded services' folder, as config/settings.py reads it (``EMBEDDED_DIR`` or var/)."""
    return Path(os.environ.get("EMBEDDED_DIR", ROOT / "var"))


def claim(folder: Path):
    """Lock ``folder``'s run file for as long as this process lives and write our pid in it.

    Returns the open file (keep it open), or None when another `make run` holds it.
    The lock goes with the process, so a run that crashed leaves none behind.
    """
    folder.mkdir(parents=True, exist_ok=True)
    handle = open(folder / RUN_FILE, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


def running_pid(folder: Path) -> int | None:
    """The pid of the `make run` that holds ``folder``'s run file, or None when none runs."""
    try:
        handle = open(folder / RUN_FILE)
    except FileNotFoundError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = handle.read().strip()
            return int(text) if text.isdigit() else None
        return None  # nobody holds it: a file left by an earlier run


def stop(folder: Path, timeout: float = 150) -> int:
    """`make stop`: stop the `make run` of ``folder`` (its web, worker, beat), then the embedded services."""
    pid = running_pid(folder)
    if pid:
        print(f"Stopping the `make run` of {folder} (pid {pid})...", flush=True)
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while running_pid(folder) == pid and time.monotonic() < deadline:
            time.sleep(0.2)
        if running_pid(folder) == pid:
            print(f"The `make run` (pid {pid}) did not stop within {timeout:.0f}s.", file=sys.stderr)
            return 1
    from config import embedded as services

    services.stop_all(folder)
    return 0


# Restarting a worker or the beat: the first restart waits FIRST_DELAY_S, each next one twice the last, at
# most MAX_DELAY_S; a process that ran STABLE_AFTER_S before it exited starts again after FIRST_DELAY_S.
FIRST_DELAY_S = 1.0
MAX_DELAY_S = 60.0
STABLE_AFTER_S = 120.0
RESTARTED = ("worker", "beat", "web")  # and every other worker ("worker-...")
WEB_STARTED_S = 15.0  # a web that exits sooner after it started is not started again: it cannot start


class Stack:
    """The children of a `make run`, watched: :meth:`check` restarts a worker, the beat or the web that
    exited, after its back-off, and stops the run when the web exits before it could serve."""

    def __init__(
        self,
        commands: dict[str, list[str]],
        *,
        first_delay: float = FIRST_DELAY_S,
        max_delay: float = MAX_DELAY_S,
        stable_after: float = STABLE_AFTER_S,
        web_started: float = WEB_STARTED_S,
        say=None,
    ):
        self.commands = commands
        self.first_delay, self.max_delay, self.stable_after = first_delay, max_delay, stable_after
        self.web_started = web_started
        self.say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        self.children: dict[str, subprocess.Popen] = {}
        self.started: dict[str, float] = {}
        self.delay: dict[str, float] = {}  # the back-off of the next restart
        self.due: dict[str, float] = {}  # name -> when its restart is due (it is down until then)
        self.restarts: dict[str, int] = dict.fromkeys(commands, 0)
        for name in commands:
            self._start(name)

    def _start(self, name: str) -> None:
        # each child in a session of its own: a Ctrl-C or a closed terminal reaches only this process, which
        # stops them all in order (a SIGHUP straight to them would make gunicorn reload and Celery re-exec)
        self.children[name] = subprocess.Popen(self.commands[name], cwd=ROOT, start_new_session=True)
        self.started[name] = time.monotonic()

    @staticmethod
    def restarted(name: str) -> bool:
        return name in RESTARTED or name.startswith("worker-")

    def check(self) -> int | None:
        """One look at the children. None while the stack runs; the exit code when it is to stop."""
        now = time.monotonic()
        for name, child in self.children.items():
            if name in self.due:
                if now >= self.due[name]:
                    del self.due[name]
                    self.restarts[name] += 1
                    self.say(f"{name}: starting again (restart {self.restarts[name]}).")
                    self._start(name)
                continue
            if child.poll() is None:
                continue
            ran = now - self.started[name]
            if not self.restarted(name) or (name == "web" and ran < self.web_started):
                self.say(f"{name} exited with code {child.returncode} after {ran:.0f}s; stopping the rest.")
                return 1
            wait = self.first_delay if ran >= self.stable_after else self.delay.get(name, self.first_delay)
            self.delay[name] = min(wait * 2, self.max_delay)
            self.due[name] = now + wait
            self.say(
                f"{name} exited with code {child.returncode} after {ran:.0f}s; "
                f"starting it again in {wait:g}s" + (" (the web goes on serving)." if name != "web" else ".")
            )
        return None

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM every child still running, then wait for each (killing one that does not stop)."""
        self.due.clear()
        for child in self.children.values():
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for name, child in self.children.items():
            try:
                child.wait(timeout)
            except subprocess.TimeoutExpired:
                self.say(f"{name} did not stop in time; killing it.")
                child.kill()
                child.wait(10)


class RedisWatch:
    """The embedded Redis of a `make run`, looked at every ``every`` seconds by :meth:`check`: one that does
    not answer (killed, crashed) is started again, logged. The workers and the beat connect to it again by
    themselves; the web answers meanwhile without it (README, "With Redis down")."""

    def __init__(self, folder: Path, *, every: float = 2.0, say=None):
        self.folder, self.every = folder, every
        self.say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        self.restarts = 0
        self.next = 0.0

    def check(self) -> None:
        from config import embedded as services

        now = time.monotonic()
        if now < self.next:
            return
        self.next = now + self.every
        if services.redis_running(self.folder):
            return
        self.restarts += 1
        self.say(f"redis: not answering; starting it again (restart {self.restarts}).")
        try:
            services.redis_url(self.folder)
        except (OSError, RuntimeError, subprocess.SubprocessError) as exc:  # tried again at the next look
            self.say(f"redis: did not start ({exc}).")


def stack_commands(python: str, host: str, port: str, folder: Path) -> dict[str, list[str]]:
    """The web, workers and beat command lines of a `make run` whose services folder is ``folder``."""
    return {
        "web": [
            python,
            "-m",
            "gunicorn",
            "config.wsgi",
            "-b",
            f"{host}:{port}",
            "-w",
            "2",
            "--threads",
            "4",
            "--access-logfile",
            "-",
            "--graceful-timeout",
            "10",
            "--control-socket",
            str(folder / CONTROL_SOCKET),
        ],
        "worker": [
            python,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--loglevel=INFO",
            f"--concurrency={os.environ.get('WORKER_CONCURRENCY', '2')}",
            "-n",
            "worker@%h",
        ],
        # the queue of very large documents (settings.INGEST_LARGE_QUEUE), one at a time, beside the worker
        "worker-large": [
            python,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--loglevel=INFO",
            "--concurrency=1",
            f"--queues={os.environ.get('INGEST_LARGE_QUEUE', 'large')}",
            "-n",
            "large@%h",
        ],
        "beat": [python, "-m", "celery", "-A", "config", "beat", "--loglevel=INFO"],
    }


def main() -> int:
    os.chdir(ROOT)
    lock = claim(services_dir())
    if lock is None:
        print(
            f"Clause Review is already running from {services_dir()} (pid {running_pid(services_dir())}).\n"
            "Use that one, or stop it first (Ctrl-C in its terminal, or `make stop`).",
            file=sys.stderr,
        )
        return 1
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SECURE_COOKIES", "0")  # plain http on loopback
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    embedded = not os.environ.get("DATABASE_URL") or not os.environ.get("REDIS_URL")

    import django
    from django.conf import settings
    from django.core.management import call_command

    from config import embedded as services

    started = time.monotonic()
    django.setup()
    # The embedded services (if used) start here rather than at their first connection, so a failing start
    # is the first thing this run reports; the children get their URLs and reuse them without checking again.
    os.environ["DATABASE_URL"] = services.ensure("postgres") or settings.DATABASE_URL
    os.environ["REDIS_URL"] = services.ensure("redis") or settings.REDIS_URL
    call_command("migrate", interactive=False, verbosity=0)
    call_command("seed_demo")

    host, port = os.environ.get("HOST", "127.0.0.1"), os.environ.get("PORT", "8000")
    python = sys.executable
    stack = Stack(stack_commands(python, host, port, services_dir()))
    redis_watch = RedisWatch(settings.EMBEDDED_DIR) if "redis" in settings.EMBEDDED_SERVICES else None
    # One-shot: once the demo documents are ingested, extract their clauses (first run only).
    helper = subprocess.Popen(
        [python, "manage.py", "seed_demo", "--extract"], cwd=ROOT, start_new_session=True
    )
    print(
        f"\n  Clause Review is starting on http://{host}:{port}/  "
        f"(set up in {time.monotonic() - started:.1f}s)"
    )
    print("  Press Ctrl-C to stop everything.\n", flush=True)

    stopping = {"flag": False}

    def request_stop(*_):  # (``stop`` is `make stop`, above)
        stopping["flag"] = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGHUP, request_stop)  # the terminal was closed
    exit_code = 0
    while not stopping["flag"]:
        ended = stack.check()
        if ended is not None:
            exit_code = ended
            break
        if redis_watch is not None:
            redis_watch.check()
        time.sleep(0.5)

    if helper.poll() is None:
        helper.send_signal(signal.SIGTERM)
    stack.stop()
    if embedded:
        services.stop_all(settings.EMBEDDED_DIR)
    print("Stopped. Data is kept in var/ for the next `make run`.")
    return exit_code


if __name__ == "__main__":
    sys.exit(stop(services_dir()) if sys.argv[1:] == ["stop"] else main())
