"""docker-compose's web healthcheck, run against the real app with production's ALLOWED_HOSTS."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db(transaction=True)
def test_the_web_healthcheck_passes_on_a_healthy_app_behind_its_public_host_name(live_server, settings):
    settings.ALLOWED_HOSTS = ["review.example.com"]  # as .env.example sets it
    test = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["web"]["healthcheck"]["test"]
    assert test[0] == "CMD-SHELL"
    command = test[1].replace("http://127.0.0.1:8000", live_server.url)
    assert command.startswith("python ")
    command = f"{sys.executable} {command.removeprefix('python ')}"
    env = dict(os.environ, ALLOWED_HOSTS="review.example.com")
    result = subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr[-1000:]
