"""`make run` after a crash or a reboot: the embedded PostgreSQL starts again on its own."""

from __future__ import annotations

import os
import subprocess

import psycopg

from config import embedded


def _crash_leaving_a_pid_that_another_process_now_has(root, other_pid: int) -> None:
    """Leave what a crash leaves: no server running, and a postmaster.pid whose pid is now another process's.

    The server is stopped, then its postmaster.pid is written back with ``other_pid`` (pid reuse). Killing it
    with SIGKILL would leave the same file, but a killed postmaster stays a zombie, its socket lock held, where
    the container's init does not reap orphans (CI's does not), so the next start failed for that reason alone.
    """
    pidfile = root / "pg" / "postmaster.pid"
    lines = pidfile.read_text().splitlines()
    assert embedded.stop_postgres(root)
    assert not pidfile.exists()
    lines[0] = str(other_pid)
    pidfile.write_text("\n".join(lines) + "\n")


def test_a_stale_postmaster_pid_whose_pid_was_reused_does_not_stop_the_next_start(services_root):
    root = services_root / "var"
    url = embedded.postgres_url(root)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (n int)")
        conn.execute("INSERT INTO kept VALUES (7)")
    running = (root / "pg" / "postmaster.pid").read_text()
    assert embedded.postgres_url(root) == url  # a running server is reused, its postmaster.pid left alone
    assert (root / "pg" / "postmaster.pid").read_text() == running
    other = subprocess.Popen(["sleep", "300"])
    try:
        _crash_leaving_a_pid_that_another_process_now_has(root, other.pid)
        assert not embedded.stop_postgres(root)  # nothing of ours runs: no stop signal to someone else's pid
        assert other.poll() is None

        url = embedded.postgres_url(root)
        with psycopg.connect(url, connect_timeout=5) as conn:
            assert conn.execute("SELECT n FROM kept").fetchone()[0] == 7
    finally:
        other.kill()
        other.wait(10)
        embedded.remove(root)


def test_a_postmaster_pid_whose_process_cannot_be_read_is_kept(tmp_path, monkeypatch):
    # /proc mounted with hidepid, or a server of another user: it may be the running server, so its pid file
    # stays (removing it would let a second postmaster start on the same data folder)
    import psutil

    pgdata = tmp_path / "pg"
    pgdata.mkdir()
    (pgdata / "postmaster.pid").write_text(f"{os.getpid()}\n{pgdata}\n")

    def unreadable(pid):
        raise psutil.AccessDenied(pid)

    monkeypatch.setattr(psutil, "Process", unreadable)
    assert embedded._clear_stale_postmaster(pgdata) is False
    assert (pgdata / "postmaster.pid").exists()


def test_make_runs_supervisor_starts_a_killed_embedded_redis_again_with_its_queue(services_root):
    # a Redis killed under `make run` stayed dead: the web, workers and beat are given its URL, so none of
    # them starts it, and uploads stayed "not queued" until someone ran `make run` again
    import signal
    import sys
    import time
    from pathlib import Path

    import redis

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from scripts import run_stack

    root = services_root / "var"
    url = embedded.redis_url(root)
    queue = redis.Redis(unix_socket_path=url.removeprefix("redis+socket://"))
    queue.rpush("celery", "a queued task")
    queue.execute_command("BGREWRITEAOF")  # on disk now, not within the second appendfsync allows
    deadline = time.monotonic() + 10
    while queue.info("persistence")["aof_rewrite_in_progress"] and time.monotonic() < deadline:
        time.sleep(0.05)
    said: list[str] = []
    watch = run_stack.RedisWatch(root, every=0, say=said.append)
    watch.check()
    assert said == [] and watch.restarts == 0  # answering: left alone
    os.kill(int((root / "redis" / "redis.pid").read_text()), signal.SIGKILL)
    deadline = time.monotonic() + 10
    while embedded.redis_running(root) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not embedded.redis_running(root)

    started = time.monotonic()
    watch.check()
    assert embedded.redis_running(root) and watch.restarts == 1
    # a look at a Redis that is gone is one ping, not the client's retries: 4.4 s a look, 13 s to restart
    assert time.monotonic() - started < 3
    assert said == ["redis: not answering; starting it again (restart 1)."]
    assert queue.lrange("celery", 0, -1) == [b"a queued task"]  # from its append-only file
