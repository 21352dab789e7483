"""The global clause catalog (built-in types and those a superuser added; no engagement): everyone signed
in can read it; only superusers add, edit, retire and reactivate its types, for every engagement at once.
An engagement's admins keep their own types and retirements on the engagement's catalog page
(reviewer.views.engagement_catalog). Every edit is kept beside the wording it replaced
(reviewer.catalog_edits); retiring asks for an explicit yes on its own page."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import slugify

from config.params import id_param
from extraction.models import ClauseType
from reviewer.catalog_edits import edit_clause_type, set_active
from reviewer.forms import ClauseTypeEditForm, ClauseTypeForm, RetireForm

QUESTION_SLUG = "q-"


def _require_superuser(request) -> None:
    if not request.user.is_superuser:
        raise PermissionDenied("Only superusers manage the global clause catalog.")


def catalog(request):
    can_manage = request.user.is_superuser
    form, status = ClauseTypeForm(), 200
    if request.method == "POST":
        _require_superuser(request)
        if "retire" in request.POST:  # retiring is confirmed on its own page
            wanted = id_param(request.POST.get("retire"))
            ct = _catalog_types().filter(pk=wanted).first() if wanted is not None else None
            return redirect("catalog-retire", ct.pk) if ct is not None else redirect("catalog")
        if "reactivate" in request.POST:  # set, not flip: a double click or two admins agree on the outcome
            wanted = id_param(request.POST.get("reactivate"))
            ct = _catalog_types().filter(pk=wanted).first() if wanted is not None else None
            if ct is not None:
                set_active(ct, True, request.user)
                messages.success(request, f"{ct.name} is now active.")
            return redirect("catalog")
        form = ClauseTypeForm(request.POST)
        if form.is_valid():
            ct = form.save(commit=False)
            ct.slug = unique_slug(ct.name)
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


def retire(request, type_id: int):
    """The confirm step of retiring a global type: the page says what retiring does; a POST retires only
    with its confirm box ticked."""
    _require_superuser(request)
    clause_type = _catalog_types().filter(pk=type_id).first()
    if clause_type is None:
        raise Http404("No such clause type in the catalog.")
    form, status = RetireForm(), 200
    if request.method == "POST":
        form = RetireForm(request.POST)
        if form.is_valid():
            set_active(clause_type, False, request.user)
            messages.success(request, f"{clause_type.name} is now retired in every engagement.")
            return redirect("catalog")
        status = 422
    context = {
        "clause_type": clause_type,
        "form": form,
        "back_url": reverse("catalog"),
        "scope_said": "every engagement",
    }
    return render(request, "reviewer/catalog_retire.html", context, status=status)


def edit(request, type_id: int):
    _require_superuser(request)
    clause_type = _catalog_types().filter(pk=type_id).first()
    if clause_type is None:
        raise Http404("No such clause type in the catalog.")
    return edit_page(request, clause_type, reverse("catalog"))


def edit_page(request, clause_type: ClauseType, back_url: str):
    """The edit form of ``clause_type`` (the caller checked who may edit it); back to ``back_url``."""
    form, status = ClauseTypeEditForm(instance=clause_type), 200
    if request.method == "POST":
        # a row of its own: validation writes the posted values into it, and the page keeps the saved name
        form = ClauseTypeEditForm(request.POST, instance=ClauseType.objects.get(pk=clause_type.pk))
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
            return redirect(back_url)
        status = 422
    changes = clause_type.changes.select_related("changed_by")[:20]
    return render(
        request,
        "reviewer/catalog_edit.html",
        {"clause_type": clause_type, "form": form, "changes": changes, "back_url": back_url},
        status=status,
    )


def _catalog_types():
    """The global catalog. Free questions asked through "find a clause" are stored as inactive custom types
    with a "q-" slug (extraction.service.question_type); they are not part of the catalog. An engagement's
    own types are not either: they are on that engagement's catalog page."""
    return ClauseType.objects.exclude(slug__startswith=QUESTION_SLUG).filter(engagement__isnull=True)


def unique_slug(name: str) -> str:
    base = slugify(name)[:90] or "clause"
    if base.startswith(QUESTION_SLUG):  # "Q-Score": never a question's slug
        base = f"type-{base}"[:90]
    slug, n = base, 2
    while ClauseType.objects.filter(slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug
