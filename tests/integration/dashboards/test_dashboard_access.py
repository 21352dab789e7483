"""Who sees the dashboards: managers and admins only, each within the engagements they belong to,
and a form posted after the session expired comes back to its page.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from dashboards import benchmarks
from dashboards.models import BenchmarkRun
from tests.integration.dashboards.builders import write_predictions


@pytest.mark.django_db
def test_figures_respect_engagement_scoping(client, engagement, data, people, other, make_member):
    client.force_login(people["manager"])
    mine = client.get(reverse("dashboards:index")).context["reviewer_total"]
    assert (mine.passes, mine.n) == (5, 9)  # the other engagement's rejected clause is not counted

    both = make_member(engagement, "manager", "boss")
    from engagements.models import Membership

    Membership.objects.create(user=both, engagement=other, role="admin")
    client.force_login(both)
    total = client.get(reverse("dashboards:index")).context["reviewer_total"]
    assert (total.passes, total.n) == (5, 10)
    only_other = client.get(reverse("dashboards:index"), {"engagement": other.pk}).context["reviewer_total"]
    assert (only_other.passes, only_other.n) == (0, 1)
    # a bad filter beside the engagement is shown with its error and never widens the view to every engagement
    for bad in ({"engine": "no-such-engine"}, {"date_from": "31/12/2025"}):
        response = client.get(reverse("dashboards:index"), {"engagement": other.pk, **bad})
        total = response.context["reviewer_total"]
        assert (total.passes, total.n) == (0, 1) and 'class="errorlist"' in response.content.decode()
    assert client.get(reverse("dashboards:index"), {"engagement": "\u00b2"}).status_code == 404  # not a 500


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["dashboards:index", "dashboards:benchmarks", "dashboards:alerts"])
def test_only_managers_and_admins_see_dashboards(client, engagement, people, django_user_model, name):
    url = reverse(name)
    assert client.get(url).status_code == 302  # anonymous: to the login page
    for who, code in (("manager", 200), ("admin", 200), ("auditor", 403)):
        client.force_login(people[who])
        assert client.get(url).status_code == code, who
    client.force_login(django_user_model.objects.create_user("nobody", password="pw-for-tests-1"))
    assert client.get(url).status_code == 404


@pytest.mark.django_db
def test_asking_for_an_engagement_goes_through_its_role(client, engagement, people, other, make_member):
    client.force_login(people["manager"])
    assert (
        client.get(reverse("dashboards:index"), {"engagement": other.pk}).status_code == 404
    )  # not a member
    assert client.get(reverse("dashboards:index"), {"engagement": 999999}).status_code == 404
    from engagements.models import Membership

    Membership.objects.create(user=people["manager"], engagement=other, role="auditor")
    assert client.get(reverse("dashboards:index"), {"engagement": other.pk}).status_code == 403
    assert client.get(reverse("dashboards:index"), {"engagement": engagement.pk}).status_code == 200
    assert client.post(reverse("dashboards:refresh"), {"engagement": other.pk}).status_code == 403


@pytest.mark.django_db
def test_benchmark_sets_of_another_engagement_stay_hidden(
    client, engagement, people, other, corpus, tmp_path
):
    private = benchmarks.import_set(corpus, "other's corpus", engagement=other)
    run = benchmarks.import_existing(
        benchmarks.new_run(private, trigger="import"), write_predictions(tmp_path / "o")
    )
    client.force_login(people["manager"])
    assert client.get(reverse("dashboards:run", args=[run.pk])).status_code == 404
    page = client.get(reverse("dashboards:benchmarks"))
    assert (
        "other&#x27;s corpus" not in page.content.decode() and "other's corpus" not in page.content.decode()
    )
    assert client.get(reverse("dashboards:index")).context["bench_total"].n == 0
    assert (
        client.post(
            reverse("dashboards:benchmark-run"),
            {"benchmark_set": private.pk, "scope": "all", "engine": "offline", "k": 5},
        ).status_code
        == 302
    )
    assert not BenchmarkRun.objects.filter(benchmark_set=private).exclude(pk=run.pk).exists()


@pytest.mark.django_db
def test_a_dashboard_form_posted_after_the_session_expired_comes_back_to_its_page(
    client, people, django_capture_on_commit_callbacks
):
    from urllib.parse import quote

    # The refresh button pressed after the session expired: POST -> sign in -> the sign-in sends a GET to
    # refresh/, which must land back on the dashboard (nothing queued), not on a blank 405.
    refresh, login = reverse("dashboards:refresh"), reverse("login")
    posted = client.post(refresh, {})
    assert posted.status_code == 302 and posted["Location"] == f"{login}?next={quote(refresh)}"
    signed_in = client.post(
        login, {"username": people["manager"].username, "password": "pw-for-tests-1", "next": refresh}
    )
    assert signed_in.status_code == 302 and signed_in["Location"] == refresh
    with django_capture_on_commit_callbacks() as queued:
        back = client.get(refresh)
        # the benchmark forms' POST-only targets send a GET back to the benchmarks page
        run = client.get(reverse("dashboards:benchmark-run"))
        imported = client.get(reverse("dashboards:benchmark-import"))
    assert back.status_code == 302 and back["Location"] == reverse("dashboards:index")
    for answer in (run, imported):
        assert answer.status_code == 302 and answer["Location"] == reverse("dashboards:benchmarks")
    assert queued == [] and not BenchmarkRun.objects.exists()


@pytest.mark.django_db
def test_the_dashboards_link_is_offered_only_to_those_it_lets_in(client, engagement, people):
    link = f'href="{reverse("dashboards:index")}"'
    for who, shown in (("manager", True), ("admin", True), ("auditor", False)):
        client.force_login(people[who])
        for page in (reverse("home"), reverse("catalog"), reverse("engagement", args=[engagement.pk])):
            assert (link in client.get(page).content.decode()) is shown, (who, page)
