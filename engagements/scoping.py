"""The two helpers every view goes through.

``scoped(queryset, user)`` keeps only rows of engagements the user is a member of;
``require_role(user, engagement, *roles)`` refuses a member whose role is not allowed.
Anything outside the user's engagements is a 404 (we do not reveal that it exists).
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from engagements.models import Engagement, Membership, Role


def _engagement_path(queryset: QuerySet) -> str:
    """The lookup from the queryset's model to its Engagement."""
    model = queryset.model
    if model is Engagement:
        return ""
    path = getattr(model, "ENGAGEMENT_PATH", None)
    if path is None:
        raise TypeError(f"{model.__name__} has no ENGAGEMENT_PATH; it cannot be scoped")
    return path


def scoped(queryset: QuerySet, user: User | AnonymousUser) -> QuerySet:
    """Rows of ``queryset`` that belong to engagements ``user`` is a member of."""
    if not user.is_authenticated:
        return queryset.none()
    path = _engagement_path(queryset)
    prefix = f"{path}__" if path else ""
    # One membership per (user, engagement), so this join never duplicates rows.
    return queryset.filter(**{f"{prefix}memberships__user": user})


def get_scoped_or_404(queryset: QuerySet, user: User | AnonymousUser, **lookup):
    try:
        return scoped(queryset, user).get(**lookup)
    except queryset.model.DoesNotExist as exc:
        raise Http404(f"No {queryset.model._meta.verbose_name} matches the given query.") from exc


def role_in(user: User | AnonymousUser, engagement: Engagement) -> str | None:
    if not user.is_authenticated:
        return None
    membership = Membership.objects.filter(user=user, engagement=engagement).only("role").first()
    return membership.role if membership else None


def require_role(user: User | AnonymousUser, engagement: Engagement, *roles: str) -> str:
    """Return the user's role in ``engagement``; 404 for non-members, 403 for a role not in ``roles``."""
    role = role_in(user, engagement)
    if role is None:
        raise Http404("No engagement matches the given query.")
    if roles and role not in roles:
        raise PermissionDenied(f"This needs the {' or '.join(roles)} role; you are {role}.")
    return role


ADMIN, AUDITOR, MANAGER = Role.ADMIN, Role.AUDITOR, Role.MANAGER
