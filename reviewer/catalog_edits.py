"""An admin's edit of a catalog type (its wording, and the name of an admin's own type), and its retiring
and reactivating, kept as a ``ClauseTypeChange`` beside what it replaced. New runs use the new wording
(and leave a retired type out); clauses already found keep their text, citations and reviews."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from extraction.models import ClauseType
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
