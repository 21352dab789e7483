"""An edit of a catalog type (its wording, and the name of an admin's own type), and its retiring and
reactivating, kept as a ``ClauseTypeChange`` beside what it replaced; an engagement's retiring and
reactivating of a type for itself alone, kept as a ``ClauseTypeRetirement`` row (who, when). New runs use
the new wording (and leave a retired type out); clauses already found keep their text, citations and
reviews."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from engagements.models import Engagement
from extraction.catalog import scope
from extraction.models import ClauseType, ClauseTypeRetirement
from reviewer.models import ClauseTypeChange

EDITABLE = ("name", "description", "query", "example", "kind")


def changed_fields(current: dict, wanted: dict) -> dict:
    """{field: (old, new)} for the editable fields ``wanted`` sets to something other than ``current``."""
    return {f: (current.get(f), wanted[f]) for f in EDITABLE if f in wanted and wanted[f] != current.get(f)}


def edit_clause_type(clause_type: ClauseType, wanted: dict, user: User) -> ClauseTypeChange | None:
    """Apply ``wanted`` (cleaned form values) to ``clause_type`` as ``user``; None when nothing changed."""
    with transaction.atomic():
        row = ClauseType.objects.select_for_update().get(pk=clause_type.pk)
        changes = changed_fields({f: getattr(row, f) for f in EDITABLE}, wanted)
        if not changes:
            return None
        for field, (_, new) in changes.items():
            setattr(row, field, new)
        row.save(update_fields=list(changes))
        return ClauseTypeChange.objects.create(
            clause_type=row,
            changed_by=user,
            before={f: old for f, (old, _) in changes.items()},
            after={f: new for f, (_, new) in changes.items()},
        )


def set_active(clause_type: ClauseType, active: bool, user: User) -> ClauseTypeChange | None:
    """Retire (``active`` False) or reactivate ``clause_type`` as ``user``; None when it already was (set, not
    flipped: a double click, or two admins at once, agree on the outcome and record it once)."""
    with transaction.atomic():
        row = ClauseType.objects.select_for_update().get(pk=clause_type.pk)
        if row.active == active:
            return None
        row.active = active
        row.save(update_fields=["active"])
        return ClauseTypeChange.objects.create(
            clause_type=row, changed_by=user, before={"active": not active}, after={"active": active}
        )


def set_retired(
    engagement: Engagement, clause_type: ClauseType, retired: bool, user: User
) -> ClauseTypeRetirement | None:
    """Retire (``retired``) or reactivate ``clause_type`` for ``engagement`` alone, as ``user``; None when it
    already was (set, not flipped, like ``set_active``). Other engagements, and the global flag, stay as
    they are."""
    with transaction.atomic():
        ClauseType.objects.select_for_update().get(pk=clause_type.pk)  # two admins at once: one row
        if scope.is_retired(engagement, clause_type) == retired:
            return None
        return ClauseTypeRetirement.objects.create(
            engagement=engagement, clause_type=clause_type, retired=retired, by=user
        )
