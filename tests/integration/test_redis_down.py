"""The web with Redis down (the broker and the cache unreachable): people sign in, the throttle still holds,
signed-in sessions keep working, and an upload is saved as "not queued". The web runs in a process of its own
whose REDIS_URL points at a Redis that is not there, on the test database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from ingest.models import Document
from tests.worker import test_database_url as database_url

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]

WEB = """
import json, os, sys
import django

django.setup()
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

args = json.loads(sys.argv[1])
seen = {}
guest = Client(raise_request_exception=False)
login = reverse("login")
seen["wrong password"] = guest.post(login, {"username": args["user"], "password": "wrong"}).status_code
seen["sign in"] = guest.post(login, {"username": args["user"], "password": args["password"]}).status_code
seen["signed in"] = guest.get(reverse("home")).status_code
guesser = Client(raise_request_exception=False)
for _ in range(settings.LOGIN_THROTTLE_LIMIT):
    guesser.post(login, {"username": args["user"], "password": "wrong"})
seen["guesser"] = guesser.post(login, {"username": args["user"], "password": args["password"]}).status_code
kept = Client(raise_request_exception=False)
kept.cookies[settings.SESSION_COOKIE_NAME] = args["session"]
seen["session"] = kept.get(reverse("engagement", args=[args["engagement"]])).status_code
upload = kept.post(
    reverse("engagement-upload", args=[args["engagement"]]),
    {"files": [SimpleUploadedFile("lease.txt", b"The Tenant shall pay rent monthly.\\n")]},
)
seen["upload"] = [upload.status_code, "Saved, but not queued" in upload.content.decode()]
print(json.dumps(seen))
"""


def test_with_redis_down_people_sign_in_sessions_work_and_uploads_are_saved_not_queued(
    engagement, make_member, tmp_path
):
    auditor = make_member(engagement, "auditor")
    admin = make_member(engagement, "admin")
    signed_in = Client()
    signed_in.force_login(admin)
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings_test",
        DATABASE_URL=database_url(),
        REDIS_URL=f"redis+socket://{tmp_path / 'no-redis.sock'}",  # nothing listens there
        ALLOWED_HOSTS="testserver",
    )
    args = {
        "user": auditor.username,
        "password": "pw-for-tests-1",
        "session": signed_in.cookies[settings.SESSION_COOKIE_NAME].value,
        "engagement": engagement.pk,
    }
    done = subprocess.run(
        [sys.executable, "-c", WEB, json.dumps(args)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {
        "wrong password": 200,
        "sign in": 302,
        "signed in": 200,
        "guesser": 429,
        "session": 200,
        "upload": [422, True],  # no file taken: saved, not queued
    }, done.stderr[-3000:]
    document = Document.objects.get(engagement=engagement)
    assert (document.status, document.error_code) == ("failed", "not_queued")
