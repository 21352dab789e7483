"""`make run` / `make stop` on one services folder: a second run leaves the first alone, stop stops it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts import run_stack  # noqa: E402

# Stands in for a running `make run`: holds the run lock of a folder until SIGTERM, like run_stack.main.
HOLDER = """
import signal, sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from scripts import run_stack
lock = run_stack.claim(Path({folder!r}))
assert lock is not None
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
print("ready", flush=True)
while True:
    time.sleep(0.1)
"""


@pytest.fixture
def running(tmp_path):
    """A process holding the run lock of tmp_path, as a first `make run` does."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER.format(root=str(ROOT), folder=str(tmp_path))],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "ready"
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)


def test_a_second_make_run_on_the_same_folder_stops_before_touching_the_services(
    running, tmp_path, monkeypatch, capsys
):
    import django

    def must_not_start(*_args, **_kwargs):
        raise AssertionError("the second run set up Django (and so the first run's services)")

    monkeypatch.setenv("EMBEDDED_DIR", str(tmp_path))
    monkeypatch.setattr(django, "setup", must_not_start)
    monkeypatch.chdir(ROOT)
    try:
        assert run_stack.main() == 1
    finally:
        os.chdir(ROOT)
    message = capsys.readouterr().err
    assert "already running" in message and str(running.pid) in message
    assert running.poll() is None  # the first run goes on


def test_make_stop_stops_the_running_make_run_of_its_folder(running, tmp_path):
    env = dict(os.environ, EMBEDDED_DIR=str(tmp_path))
    subprocess.run(
        ["make", "-s", "stop"], cwd=ROOT, env=env, check=True, timeout=120, stdout=subprocess.DEVNULL
    )
    running.wait(10)
    assert run_stack.running_pid(tmp_path) is None


def test_the_run_lock_is_free_again_once_its_holder_is_gone(running, tmp_path):
    assert run_stack.running_pid(tmp_path) == running.pid
    assert run_stack.claim(tmp_path) is None
    running.kill()
    running.wait(10)
    deadline = time.monotonic() + 5
    while run_stack.running_pid(tmp_path) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    lock = run_stack.claim(tmp_path)
    assert lock is not None  # a crashed run leaves no stale lock behind
    lock.close()
