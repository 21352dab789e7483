"""The beat's snapshots and alerts: the daily refresh snapshots figures and raises and
resolves alerts, stale snapshots are recomputed, a real worker refreshes.
"""

from __future__ import annotations

import datetime as dt
import logging
import time

import pytest
from django.urls import reverse
from django.utils import timezone

from dashboards.models import Alert, DashboardSnapshot
from dashboards.tasks import refresh_dashboards
from tests.integration.dashboards.builders import build_reviews, review


@pytest.mark.django_db
def test_daily_refresh_snapshots_figures_and_raises_alerts(client, engagement, data, people, caplog):
    with caplog.at_level(logging.WARNING, logger="dashboards.alerts"):
        assert refresh_dashboards() == 1
    snapshot = DashboardSnapshot.objects.get(engagement=engagement)
    assert sum(s["n"] for s in snapshot.figures["strata"]) == 9
    open_alerts = Alert.objects.filter(engagement=engagement, resolved_at__isnull=True)
    assert open_alerts.filter(kind="stratum").count() == 4 and open_alerts.filter(kind="silent").count() == 1
    assert caplog.text.count("ALERT raised") == 5

    # The view now reads the snapshot (a cache): a new review shows after the next refresh.
    review(data["e"][3], people["admin"], "accept")  # Services·Cap·back becomes 2/2
    client.force_login(people["manager"])
    response = client.get(reverse("dashboards:index"))
    assert response.context["reviewer"].as_of == snapshot.computed_at
    assert response.context["reviewer_total"].passes == 5
    assert "open alerts raised by the scheduled checks" in response.content.decode()
    narrowed = client.get(reverse("dashboards:index"), {"engine": "offline"})  # filters compute live
    assert narrowed.context["reviewer"].as_of is None

    refresh_dashboards(engagement.pk)
    assert client.get(reverse("dashboards:index")).context["reviewer_total"].passes == 6
    resolved = Alert.objects.get(key="Services|Cap On Liability|back")
    assert resolved.resolved_at is not None
    assert Alert.objects.filter(engagement=engagement, resolved_at__isnull=True).count() == 4  # no duplicates
    trend = client.get(reverse("dashboards:index")).context["reviewer_trend"]
    assert trend["points"][-1]["passes"] == 6


@pytest.mark.django_db
def test_stale_snapshot_is_recomputed_live(client, engagement, data, people):
    refresh_dashboards(engagement.pk)
    DashboardSnapshot.objects.update(computed_at=timezone.now() - dt.timedelta(days=3))
    review(data["e"][3], people["admin"], "accept")
    client.force_login(people["manager"])
    response = client.get(reverse("dashboards:index"))
    assert response.context["reviewer"].as_of is None and response.context["reviewer_total"].passes == 6


@pytest.mark.django_db
def test_refresh_button_queues_a_refresh(
    client, engagement, people, monkeypatch, django_capture_on_commit_callbacks
):
    queued = []
    monkeypatch.setattr("dashboards.tasks.refresh_dashboards.delay", lambda pk=None: queued.append(pk))
    client.force_login(people["manager"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("dashboards:refresh"), {"engagement": engagement.pk})
    assert response.status_code == 302 and queued == [engagement.pk]
    client.force_login(people["auditor"])
    assert client.post(reverse("dashboards:refresh")).status_code == 403


@pytest.mark.django_db
def test_beat_schedule_names_the_dashboard_tasks(settings):
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {"dashboards.tasks.refresh_dashboards", "dashboards.tasks.weekly_silent_source"} <= tasks


@pytest.mark.django_db(transaction=True)
def test_refresh_runs_on_a_real_worker(celery_worker, engagement, make_member):
    data = build_reviews(engagement, make_member(engagement, "auditor", "wanda"))
    assert data["e"][1].pk
    refresh_dashboards.delay(engagement.pk)
    deadline = time.monotonic() + 60
    while (
        time.monotonic() < deadline and not DashboardSnapshot.objects.filter(engagement=engagement).exists()
    ):
        time.sleep(0.2)
    snapshot = DashboardSnapshot.objects.filter(engagement=engagement).first()
    assert snapshot is not None, celery_worker.log_tail()
    assert sum(s["passes"] for s in snapshot.figures["strata"]) == 5
    assert snapshot.figures["silent"]["n"] == 4
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Alert.objects.filter(engagement=engagement).count() < 5:
        time.sleep(0.2)
    assert Alert.objects.filter(engagement=engagement, resolved_at__isnull=True).count() == 5
