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
