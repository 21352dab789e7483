"""The clause catalog: everyone signed in can read it; admins (of any engagement) add, edit and retire
types. Every edit is kept beside the wording it replaced (reviewer.catalog_edits)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.text import slugify

from config.params import id_param
from engagements.models import Membership, Role
from extraction.models import ClauseType
from reviewer.catalog_edits import edit_clause_type, set_active
from reviewer.forms import ClauseTypeEditForm, ClauseTypeForm

QUESTION_SLUG = "q-"


def _is_admin(user) -> bool:
    return Membership.objects.filter(user=user, role=Role.ADMIN).exists()


def catalog(request):
    can_manage = _is_admin(request.user)
    form, status = ClauseTypeForm(), 200
    if request.method == "POST":
        if not can_manage:
            raise PermissionDenied("Only admins manage the clause catalog.")
        for action, active in (("retire", False), ("reactivate", True)):
            if action in request.POST:  # set, not flip: a double click or two admins agree on the outcome
                wanted = id_param(request.POST.get(action))
                ct = _catalog_types().filter(pk=wanted).first() if wanted is not None else None
                if ct is not None:
                    set_active(ct, active, request.user)
                    messages.success(request, f"{ct.name} is now {'active' if active else 'retired'}.")
                return redirect("catalog")
        form = ClauseTypeForm(request.POST)
        if form.is_valid():
            ct = form.save(commit=False)
            ct.slug = _unique_slug(ct.name)
            ct.source = ClauseType.Source.CUSTOM
            ct.save()
            messages.success(request, f"Added clause type {ct.name}.")
            return redirect("catalog")
        status = 422
    types = _catalog_types().order_by("source", "name")
    return render(
        request,
        "reviewer/catalog.html",
        {"types": types, "form": form, "can_manage": can_manage},
        status=status,
    )


def edit(request, type_id: int):
    if not _is_admin(request.user):
        raise PermissionDenied("Only admins edit the clause catalog.")
    clause_type = _catalog_types().filter(pk=type_id).first()
    if clause_type is None:
        raise Http404("No such clause type in the catalog.")
    form, status = ClauseTypeEditForm(instance=clause_type), 200
    if request.method == "POST":
        # a row of its own: validation writes the posted values into it, and the page keeps the saved name
        form = ClauseTypeEditForm(request.POST, instance=ClauseType.objects.get(pk=type_id))
        if form.is_valid():
            change = edit_clause_type(clause_type, form.cleaned_data, request.user)
            if change is None:
                messages.info(request, f"{clause_type.name}: nothing changed.")
            else:
                messages.success(
                    request,
                    f"Saved {change.clause_type.name}. New runs use it; clauses already "
                    "found keep their text and reviews.",
                )
            return redirect("catalog")
        status = 422
    changes = clause_type.changes.select_related("changed_by")[:20]
    return render(
        request,
        "reviewer/catalog_edit.html",
        {"clause_type": clause_type, "form": form, "changes": changes},
        status=status,
    )


def _catalog_types():
    """Free questions asked through "find a clause" are stored as inactive custom types with a "q-"
    slug (extraction.service.question_type); they are not part of the catalog."""
    return ClauseType.objects.exclude(slug__startswith=QUESTION_SLUG)


def _unique_slug(name: str) -> str:
    base = slugify(name)[:90] or "clause"
    if base.startswith(QUESTION_SLUG):  # "Q-Score": never a question's slug
        base = f"type-{base}"[:90]
    slug, n = base, 2
    while ClauseType.objects.filter(slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug
