"""The project's commands on a database whose migrations were never applied (a fresh EMBEDDED_DIR)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from config import embedded
from demo import make_contract_pdf

ROOT = Path(__file__).resolve().parents[2]


def test_a_command_on_a_database_not_migrated_says_to_migrate_instead_of_a_traceback(services_root, tmp_path):
    var = services_root / "var"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "documents.jsonl").write_text('{"doc": "a", "pdf": "a.pdf"}\n')
    (corpus / "gold.jsonl").write_text('{"doc": "a", "clause_type": "Parties", "present": false}\n')
    make_contract_pdf(corpus / "a.pdf", pages=12)
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    env.update(EMBEDDED_DIR=str(var), DJANGO_SETTINGS_MODULE="config.settings", HF_HUB_OFFLINE="1")
    try:
        done = subprocess.run(
            [sys.executable, "manage.py", "evaluate", str(corpus), "--out", str(tmp_path / "out")],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        embedded.remove(var)
    assert done.returncode == 1
    assert "not applied yet" in done.stderr and "manage.py migrate" in done.stderr
    assert "Traceback" not in done.stderr  # before: relation "engagements_engagement" does not exist
