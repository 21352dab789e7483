"""Which clause types an engagement sees and extracts.

An engagement sees the global catalog (built-in types and those a superuser added: no engagement) and its
own types (an admin's, ``ClauseType.engagement``). It extracts those of them that are active: not retired
globally (``ClauseType.active``, a superuser's) and not retired by the engagement itself (its latest
``ClauseTypeRetirement`` row for the type). Another engagement's types and retirements never count.
Free questions asked with Find a clause are inactive types, so they are never among the active ones.
"""

from __future__ import annotations

from django.db.models import BooleanField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from engagements.models import Engagement
from extraction.models import ClauseType, ClauseTypeRetirement


def visible(engagement: Engagement | None) -> QuerySet[ClauseType]:
    """The global catalog and ``engagement``'s own types (the global catalog alone for None)."""
    owned = Q(engagement__isnull=True)
    if engagement is not None:
        owned |= Q(engagement=engagement)
    return ClauseType.objects.filter(owned)


def with_retired(types: QuerySet[ClauseType], engagement: Engagement | None) -> QuerySet[ClauseType]:
    """``types`` annotated ``retired_here``: whether ``engagement`` retired the type for itself (its latest
    retirement row says so; False with no row, and for None)."""
    if engagement is None:
        return types.annotate(retired_here=Value(False))
    latest = ClauseTypeRetirement.objects.filter(engagement=engagement, clause_type=OuterRef("pk")).order_by(
        "-id"
    )
    return types.annotate(
        retired_here=Coalesce(
            Subquery(latest.values("retired")[:1]), Value(False), output_field=BooleanField()
        )
    )


def active_types(engagement: Engagement | None) -> QuerySet[ClauseType]:
    """The types a run of ``engagement`` extracts: its visible types, active globally and not retired by it
    (with None, the global catalog's active types)."""
    annotated = with_retired(visible(engagement).filter(active=True), engagement)
    return annotated.filter(retired_here=False)  # type: ignore[misc]  # the annotation with_retired adds


def is_retired(engagement: Engagement, clause_type: ClauseType) -> bool:
    """Whether ``engagement`` retired ``clause_type`` for itself (a global retirement is ``active``)."""
    latest = (
        ClauseTypeRetirement.objects.filter(engagement=engagement, clause_type=clause_type)
        .order_by("-id")
        .values_list("retired", flat=True)
        .first()
    )
    return bool(latest)
