"""The foundation works on real services: pgvector, Celery over Redis, embedded restarts, login and scoping."""

from __future__ import annotations

import time

import psycopg
import pytest
from django.contrib.postgres.search import SearchQuery
from django.urls import reverse
from pgvector.django import CosineDistance

from config import embedded
from engagements.models import Engagement
from ingest.models import Chunk, Document
from taskstate.models import TaskState


def _document(engagement, title="Master Services Agreement", sha="a" * 64):
    return Document.objects.create(
        engagement=engagement, file="documents/x.pdf", original_name="x.pdf", sha256=sha, title=title
    )


def _wait_state(task_id: str, states: set[str], timeout: float = 30) -> TaskState:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = TaskState.objects.filter(task_id=task_id).first()
        if row and row.state in states:
            return row
        time.sleep(0.1)
    raise AssertionError(f"task {task_id} did not reach {states}; last row: {row and row.state}")


@pytest.mark.django_db
def test_pgvector_cosine_nearest_neighbour_through_the_orm(engagement):
    document = _document(engagement)
    vectors = {"east": [1.0, 0.0], "north": [0.0, 1.0], "north-east": [0.7, 0.7]}
    for ordinal, (name, head) in enumerate(vectors.items()):
        Chunk.objects.create(
            document=document,
            chunk_id=name,
            ordinal=ordinal,
            text=f"{name} text",
            char_start=0,
            char_end=1,
            page_start=1,
            page_end=1,
            embedding=head + [0.0] * 382,
        )
    query = [0.1, 1.0] + [0.0] * 382
    nearest = list(
        Chunk.objects.filter(document=document)
        .order_by(CosineDistance("embedding", query))
        .values_list("chunk_id", flat=True)
    )
    assert nearest == ["north", "north-east", "east"]


@pytest.mark.django_db
def test_full_text_vector_is_generated_by_postgres(engagement):
    document = _document(engagement)
    Chunk.objects.create(
        document=document,
        chunk_id="c1",
        ordinal=0,
        text="The Supplier shall indemnify the Customer.",
        char_start=0,
        char_end=10,
        page_start=1,
        page_end=1,
    )
    stemmed = SearchQuery("indemnifies customers", config="english")  # English stems match
    assert Chunk.objects.filter(search=stemmed).exists()
    assert not Chunk.objects.filter(search=SearchQuery("termination", config="english")).exists()


@pytest.mark.django_db(transaction=True)
def test_celery_task_round_trips_through_redis_with_a_real_worker(celery_worker):
    from taskstate.tasks import healthcheck

    ok = healthcheck.delay("round trip")
    row = _wait_state(ok.id, {"success", "failure"})
    assert row.state == "success", celery_worker.log_tail()
    assert row.name == "taskstate.tasks.healthcheck"
    assert row.started_at and row.finished_at

    bad = healthcheck.delay(fail_with="disk on fire")
    row = _wait_state(bad.id, {"success", "failure"})
    assert row.state == "failure"
    assert "HealthCheckFailure: disk on fire" in row.error
    assert "Traceback" in row.traceback


def test_embedded_services_start_from_empty_folder_stop_restart_and_keep_data(services_root):
    root = services_root / "var"
    url = embedded.postgres_url(root)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE TABLE kept (v vector(3))")
        conn.execute("INSERT INTO kept VALUES ('[1,2,3]')")
    import redis

    sock = embedded.redis_url(root).removeprefix("redis+socket://")
    redis.Redis(unix_socket_path=sock).set("kept", "yes")
    try:
        assert embedded.stop_redis(root) and embedded.stop_postgres(root)
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(url, connect_timeout=2)

        url = embedded.postgres_url(root)
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT v::text FROM kept").fetchone()[0] == "[1,2,3]"
        sock = embedded.redis_url(root).removeprefix("redis+socket://")
        assert redis.Redis(unix_socket_path=sock).get("kept") == b"yes"
    finally:
        embedded.remove(root)


@pytest.mark.django_db
def test_every_page_requires_login(client, engagement):
    document = _document(engagement)
    for url in [
        reverse("home"),
        reverse("engagement", args=[engagement.pk]),
        reverse("document-file", args=[document.pk]),
        "/admin/",
    ]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert "/login/" in response["Location"], url


@pytest.mark.django_db
def test_member_of_one_engagement_gets_404_for_another(client, make_member, engagement):
    other = Engagement.objects.create(name="Other client")
    other_doc = _document(other, title="Secret", sha="b" * 64)
    user = make_member(engagement, "auditor")
    client.force_login(user)
    assert client.get(reverse("engagement", args=[engagement.pk])).status_code == 200
    assert client.get(reverse("engagement", args=[other.pk])).status_code == 404
    assert client.get(reverse("document-file", args=[other_doc.pk])).status_code == 404
    home = client.get(reverse("home")).content.decode()
    assert "Acme audit 2026" in home and "Other client" not in home


@pytest.mark.django_db
def test_login_is_throttled_after_repeated_failures(client, make_member, engagement):
    user = make_member(engagement, "auditor")
    for _ in range(5):
        assert (
            client.post(reverse("login"), {"username": user.username, "password": "wrong"}).status_code == 200
        )
    blocked = client.post(reverse("login"), {"username": user.username, "password": "pw-for-tests-1"})
    assert blocked.status_code == 429
    assert "Too many failed sign-in attempts" in blocked.content.decode()


@pytest.mark.django_db
def test_password_spraying_from_one_address_is_throttled_across_usernames(
    client, make_member, engagement, settings
):
    """One password tried on many usernames: each username fails once, under its own limit; the address's
    failures across usernames are counted too, and past their limit every sign-in from it waits."""
    settings.LOGIN_THROTTLE_ADDRESS_LIMIT = 8
    user = make_member(engagement, "auditor")
    sprayer = {"REMOTE_ADDR": "203.0.113.9"}
    for n in range(8):
        tried = client.post(reverse("login"), {"username": f"user{n}", "password": "Summer2026!"}, **sprayer)
        assert tried.status_code == 200
    blocked = client.post(
        reverse("login"), {"username": user.username, "password": "pw-for-tests-1"}, **sprayer
    )
    assert blocked.status_code == 429 and "Too many failed sign-in attempts" in blocked.content.decode()
    elsewhere = client.post(
        reverse("login"),
        {"username": user.username, "password": "pw-for-tests-1"},
        REMOTE_ADDR="198.51.100.4",
    )
    assert elsewhere.status_code == 302


@pytest.mark.django_db
def test_behind_a_proxy_the_throttle_counts_each_clients_address_and_ignores_what_a_client_forges(
    client, make_member, engagement, settings
):
    # every request reaches web from the proxy's address; the proxy appends the client's to X-Forwarded-For
    settings.TRUSTED_PROXY_COUNT = 1
    user = make_member(engagement, "auditor")
    proxy = {"REMOTE_ADDR": "10.0.0.2"}

    def sign_in(client_says: str, password: str):
        return client.post(
            reverse("login"),
            {"username": user.username, "password": password},
            HTTP_X_FORWARDED_FOR=client_says,
            **proxy,
        )

    for forged in (
        "1.1.1.1",
        "2.2.2.2",
        "3.3.3.3",
        "4.4.4.4",
        "5.5.5.5",
    ):  # a guesser rotating a forged header
        assert sign_in(f"{forged}, 203.0.113.7", "wrong").status_code == 200
    assert sign_in("9.9.9.9, 203.0.113.7", "pw-for-tests-1").status_code == 429  # still throttled
    # ... while the same user signing in from another address is not locked out by the guesser
    assert sign_in("198.51.100.4", "pw-for-tests-1").status_code == 302


@pytest.mark.django_db
def test_the_admin_sites_sign_in_is_throttled_like_ours(client, make_member, engagement):
    # the admin site has its own sign-in form; it must not be a way round the throttle for the staff
    # accounts, the ones most worth guessing, and failures on either form count on both
    user = make_member(engagement, "admin")
    user.is_staff = user.is_superuser = True
    user.save()
    for url in [reverse("login")] * 2 + [reverse("admin:login")] * 3:
        assert client.post(url, {"username": user.username, "password": "wrong"}).status_code == 200
    blocked = client.post(reverse("admin:login"), {"username": user.username, "password": "pw-for-tests-1"})
    assert "_auth_user_id" not in client.session
    assert "Too many failed sign-in attempts" in blocked.content.decode()
    assert (
        client.post(reverse("login"), {"username": user.username, "password": "pw-for-tests-1"}).status_code
        == 429
    )


@pytest.mark.django_db
def test_the_models_and_their_migrations_agree():
    # a model change without its migration would reach a user's database only half done
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
    except SystemExit as exc:
        raise AssertionError(f"models changed without a migration:\n{out.getvalue()}") from exc
