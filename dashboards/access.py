"""Who may see dashboards: managers and admins, and only for their own engagements.

A user with no membership at all gets a 404 (nothing here exists for them); a member whose
every role is auditor gets a 403. One engagement asked for by id goes through ``require_role``.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.http import Http404

from engagements.models import Engagement, Membership
from engagements.scoping import ADMIN, MANAGER, require_role

MANAGING = (ADMIN, MANAGER)


def managed_engagements(user: User | AnonymousUser):
    if not user.is_authenticated:
        return Engagement.objects.none()
    return Engagement.objects.filter(memberships__user=user, memberships__role__in=MANAGING).order_by("name")


def require_dashboard_access(user: User | AnonymousUser):
    """The engagements whose dashboards ``user`` may see; 404 / 403 when there are none."""
    managed = list(managed_engagements(user))
    if managed:
        return managed
    if user.is_authenticated and Membership.objects.filter(user=user).exists():
        raise PermissionDenied("Dashboards are for managers and admins.")
    raise Http404("No dashboard here.")


def require_engagement(user: User | AnonymousUser, engagement_id: int) -> Engagement:
    """One engagement by id: 404 unless a member, 403 unless manager or admin there."""
    engagement = Engagement.objects.filter(pk=engagement_id).first()
    if engagement is None:
        raise Http404("No engagement matches the given query.")
    require_role(user, engagement, *MANAGING)
    return engagement


def is_admin_somewhere(user: User | AnonymousUser) -> bool:
    return user.is_authenticated and Membership.objects.filter(user=user, role=ADMIN).exists()
