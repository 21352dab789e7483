"""docker-compose.yml cannot be run here (no Docker engine); check it is complete instead."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_compose_names_the_services_and_the_env_the_settings_need():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"db", "redis", "web", "worker", "beat"} <= set(services)
    assert services["db"]["image"].startswith("pgvector/pgvector")
    for name in ("db", "redis", "web", "worker"):
        assert "healthcheck" in services[name], name
    assert "worker" in services["worker"]["command"] and "beat" in services["beat"]["command"]
    assert {"pgdata", "media"} <= set(compose["volumes"])

    example = dict(
        line.split("=", 1)
        for line in (ROOT / ".env.example").read_text().splitlines()
        if line and not line.startswith("#")
    )
    settings_source = (ROOT / "config" / "settings.py").read_text()
    for variable in (
        "DATABASE_URL",
        "REDIS_URL",
        "ANTHROPIC_API_KEY",
        "EXTRACTION_ENGINE",
        "DJANGO_SECRET_KEY",
        "DEBUG",
        "ALLOWED_HOSTS",
        "MEDIA_ROOT",
    ):
        assert variable in example, variable
        assert f'"{variable}"' in settings_source, variable
    for service in ("web", "worker", "beat"):
        assert services[service]["env_file"] == ".env"


def test_compose_starts_again_a_service_that_dies_and_runs_the_one_off_migration_once():
    # a dead worker (or beat, or web) stayed dead until someone ran `docker compose up` again
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    for name in ("db", "redis", "web", "worker", "worker-large", "beat"):
        assert services[name].get("restart") == "unless-stopped", name
    assert services["migrate"]["restart"] == "no"


def test_compose_and_make_run_serve_the_queue_of_very_large_documents():
    from django.conf import settings

    from scripts import run_stack

    large = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["worker-large"]
    assert (
        f"--queues={settings.INGEST_LARGE_QUEUE}" in large["command"]
        and "--concurrency=1" in large["command"]
    )
    assert "healthcheck" in large
    commands = run_stack.stack_commands("python", "127.0.0.1", "8000", ROOT / "var")
    assert f"--queues={settings.INGEST_LARGE_QUEUE}" in commands["worker-large"]
    assert run_stack.Stack.restarted("worker-large")


def test_no_secret_is_committed():
    example = (ROOT / ".env.example").read_text()
    assert "ANTHROPIC_API_KEY=\n" in example
    assert not (ROOT / ".env").exists() or ".env" in (ROOT / ".gitignore").read_text()


def test_the_image_leaves_secrets_and_local_data_out_of_the_build():
    """Dockerfile's `COPY . .` would otherwise bake .env (API key, passwords) and var/ (the development
    database, uploaded contracts, the secret key, the demo passwords) into the image."""
    ignored = {
        line.strip().strip("/")
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".env", "var", ".venv", ".git"} <= ignored


def test_the_image_user_can_write_the_app_folder_the_settings_write_to():
    """Settings create var/staticfiles on import and the embedder writes its ONNX model to var/models:
    in an image built without var/ (a fresh clone), /app belongs to root and every service failed to start."""
    import re

    dockerfile = (ROOT / "Dockerfile").read_text()
    user = re.search(r"^USER (\S+)", dockerfile, re.M).group(1)
    owned = [
        path
        for paths in re.findall(rf"chown (?:-R )?{user}(?::\S+)? ([^&\n]+)", dockerfile)
        for path in paths.split()
    ]
    assert "/app/var" in owned and "/data/media" in owned


def test_the_development_secret_key_is_readable_by_its_owner_only():
    # it was written 0644: any local user could read it and forge a session cookie
    import os
    import stat
    import subprocess
    import sys

    key = ROOT / "var" / "secret_key"
    if key.exists():
        key.chmod(0o644)  # as an older checkout left it
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SECRET_KEY"}
    subprocess.run([sys.executable, "-c", "import config.settings"], cwd=ROOT, env=env, check=True)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
