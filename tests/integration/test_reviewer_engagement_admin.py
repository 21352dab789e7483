"""Running an engagement in the app: opening one, inviting people who have no account yet."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from engagements.models import Engagement, Membership


@pytest.mark.django_db
def test_an_admin_opens_an_engagement_and_becomes_its_admin(client, engagement, make_member):
    url = reverse("engagement-new")
    client.force_login(make_member(engagement, "auditor"))
    assert client.get(url).status_code == 403
    assert 'id="new-engagement"' not in client.get(reverse("home")).content.decode()
    client.force_login(admin := make_member(engagement, "admin"))
    assert 'id="new-engagement"' in client.get(reverse("home")).content.decode()
    response = client.post(url, {"name": "Globex 2026", "client": "Globex"})
    opened = Engagement.objects.get(name="Globex 2026")
    assert response["Location"] == reverse("engagement-members", args=[opened.pk])
    assert Membership.objects.get(engagement=opened).user == admin
    assert Membership.objects.get(engagement=opened).role == "admin"
    assert client.post(url, {"name": "Globex 2026"}).status_code == 422  # names are unique


@pytest.mark.django_db
def test_an_admin_invites_someone_who_sets_a_password_with_a_one_time_link(
    client, engagement, make_member, django_user_model
):
    url = reverse("engagement-members", args=[engagement.pk])
    client.force_login(make_member(engagement, "admin"))
    page = client.post(url, {"action": "invite", "username": "dana", "email": "d@x.test", "role": "manager"})
    assert page.status_code == 200
    dana = django_user_model.objects.get(username="dana")
    assert not dana.has_usable_password() and dana.memberships.get(engagement=engagement).role == "manager"
    link = re.search(r'<code id="invite-link">([^<]+)</code>', page.content.decode()).group(1)
    again = client.post(url, {"action": "invite", "username": "Dana", "role": "auditor"})
    assert again.status_code == 422 and "add them by username" in again.content.decode()

    client.logout()
    form_page = client.get(link, follow=True)  # Django moves the token out of the URL first
    assert form_page.status_code == 200 and form_page.context["validlink"]
    done = client.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": "a-long-new-password-7", "new_password2": "a-long-new-password-7"},
    )
    assert done.status_code == 302
    dana.refresh_from_db()
    assert dana.check_password("a-long-new-password-7")
    assert not client.get(link, follow=True).context["validlink"]  # once only


@pytest.mark.django_db
def test_only_the_engagements_admins_invite(client, engagement, make_member, django_user_model):
    url = reverse("engagement-members", args=[engagement.pk])
    other = Engagement.objects.create(name="Beta audit 2026")
    client.force_login(make_member(other, "admin"))
    assert client.post(url, {"action": "invite", "username": "eve"}).status_code == 404
    client.force_login(make_member(engagement, "auditor"))
    assert client.post(url, {"action": "invite", "username": "eve"}).status_code == 403
    assert not django_user_model.objects.filter(username="eve").exists()
