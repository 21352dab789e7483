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


def test_each_stacks_gunicorn_keeps_its_control_socket_in_its_own_services_folder(tmp_path):
    # gunicorn's default control socket is one per user (~/.gunicorn/gunicorn.ctl): two stacks on one machine
    # clashed over it
    first, second = (
        run_stack.stack_commands(sys.executable, "127.0.0.1", port, tmp_path / name)["web"]
        for name, port in (("a", "8000"), ("b", "8001"))
    )
    sockets = [Path(cmd[cmd.index("--control-socket") + 1]) for cmd in (first, second)]
    assert sockets == [tmp_path / "a" / "gunicorn.ctl", tmp_path / "b" / "gunicorn.ctl"]


def test_a_worker_that_dies_is_started_again_with_a_bounded_back_off_while_the_web_serves():
    # a dead worker stopped the whole run, the web with it
    serving = [sys.executable, "-c", "import time; time.sleep(60)"]
    dying = [sys.executable, "-c", "import sys; sys.exit(3)"]
    said: list[str] = []
    stack = run_stack.Stack(
        {"web": serving, "worker": dying, "beat": serving},
        first_delay=0.1,
        max_delay=0.4,
        stable_after=30,
        say=said.append,
    )
    try:
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            assert stack.check() is None  # the run goes on
            time.sleep(0.02)
        web = stack.children["web"]
        assert web.poll() is None and stack.restarts["web"] == 0 and stack.restarts["beat"] == 0
        waits = [
            float(line.split("again in ")[1].split("s")[0]) for line in said if "exited with code 3" in line
        ]
        assert waits[:4] == [0.1, 0.2, 0.4, 0.4] and max(waits) == 0.4  # doubling, then held at the bound
        assert stack.restarts["worker"] >= 4 and "worker: starting again (restart 1)." in said
        web.terminate()
        web.wait(10)
        assert stack.check() == 1 and "web exited with code" in said[-1]  # before it could serve: stops
    finally:
        stack.stop(timeout=10)
    assert all(child.poll() is not None for child in stack.children.values())


def test_a_web_killed_after_it_served_is_started_again_and_the_run_goes_on():
    serving = [sys.executable, "-c", "import time; time.sleep(60)"]
    said: list[str] = []
    stack = run_stack.Stack({"web": serving}, first_delay=0.05, web_started=0.2, say=said.append)
    try:
        time.sleep(0.3)  # it has served
        first = stack.children["web"]
        first.kill()
        first.wait(10)
        deadline = time.monotonic() + 3
        while stack.restarts["web"] == 0 and time.monotonic() < deadline:
            assert stack.check() is None  # the run goes on
            time.sleep(0.02)
        assert stack.restarts["web"] == 1 and stack.children["web"].poll() is None
        assert any("web exited with code -9" in line and "starting it again" in line for line in said)
    finally:
        stack.stop(timeout=10)


def test_a_worker_that_ran_a_while_before_it_died_starts_again_after_the_first_delay():
    said: list[str] = []
    lives = [sys.executable, "-c", "import time; time.sleep(0.3)"]
    stack = run_stack.Stack({"beat": lives}, first_delay=0.05, max_delay=5, stable_after=0.2, say=said.append)
    try:
        deadline = time.monotonic() + 2.5
        while time.monotonic() < deadline:
            stack.check()
            time.sleep(0.02)
    finally:
        stack.stop(timeout=10)
    waits = {line.split("again in ")[1].split("s")[0] for line in said if "exited" in line}
    assert len([line for line in said if "exited" in line]) >= 3 and waits == {"0.05"}
