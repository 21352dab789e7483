"""Scoped loading with the member's role in one query.

Everything a reviewer view reads goes through these: a row outside the user's engagements
is a 404 (we do not reveal it exists); a member whose role is not allowed gets a 403.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db.models import F
from django.http import Http404

from engagements.models import Engagement, Role
from engagements.scoping import scoped
from extraction.models import Citation, Extraction
from ingest.models import Document
from reviewer.rows import with_rows as annotate_rows

ADMIN, AUDITOR, MANAGER = Role.ADMIN.value, Role.AUDITOR.value, Role.MANAGER.value
ANY_ROLE: tuple[str, ...] = ()
DECIDE_ROLES = (AUDITOR, ADMIN)  # managers look on (read-only review)
FIND_ROLES = (AUDITOR, ADMIN)
MANAGE_ROLES = (ADMIN,)


def _check(row, roles: tuple[str, ...]):
    if roles and row.my_role not in roles:
        raise PermissionDenied(f"This needs the {' or '.join(roles)} role; you are {row.my_role}.")
    return row


def _one(queryset, **lookup):
    row = queryset.filter(**lookup).first()
    if row is None:
        raise Http404("Not found.")
    return row


def engagement_for(
    user: User | AnonymousUser, engagement_id: int, roles: tuple[str, ...] = ANY_ROLE
) -> Engagement:
    qs = scoped(Engagement.objects.all(), user).annotate(my_role=F("memberships__role"))
    return _check(_one(qs, pk=engagement_id), roles)


def documents_of(user: User | AnonymousUser):
    """Scoped documents, text deferred (it can be megabytes), role annotated."""
    return (
        scoped(Document.objects.all(), user)
        .defer("text")
        .select_related("engagement")
        .annotate(my_role=F("engagement__memberships__role"))
    )


def document_for(user: User | AnonymousUser, document_id: int, roles: tuple[str, ...] = ANY_ROLE) -> Document:
    return _check(_one(documents_of(user), pk=document_id), roles)


def extraction_for(
    user: User | AnonymousUser,
    document_id: int,
    extraction_id: int,
    roles: tuple[str, ...] = ANY_ROLE,
    *,
    with_rows: bool = False,
    pages_for: int | None = None,
) -> Extraction:
    """The clause (document, engagement, type joined); ``with_rows``: its citations and reviews too,
    and with ``pages_for`` the page texts around that citation (0: the first) — one query in all."""
    qs = (
        scoped(Extraction.objects.all(), user)
        .select_related("document", "document__engagement", "clause_type")
        .defer("document__text")
        .annotate(my_role=F("document__engagement__memberships__role"))
    )
    if with_rows:
        qs = annotate_rows(qs, pages_for=pages_for)
    return _check(_one(qs, pk=extraction_id, document_id=document_id), roles)


def citation_for(user: User | AnonymousUser, document_id: int, citation_id: int) -> Citation:
    """A citation of the document (its clause and document joined, the text left in the database)."""
    qs = (
        scoped(Citation.objects.all(), user)
        .select_related("extraction__document")
        .defer("extraction__document__text")
    )
    return _one(qs, pk=citation_id, extraction__document_id=document_id)
