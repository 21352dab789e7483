"""An engagement's clause catalog: the global types and the engagement's own, each active or retired here.

Scoped like every engagement page: a non-member gets a 404; members read it; only the engagement's admins
change it (403 otherwise), and only for this engagement: they add and edit its own types and retire or
reactivate any type it sees for this engagement alone (``ClauseTypeRetirement``; retiring asks for an
explicit yes on its own page). The global catalog's wording and its global retirements are the
superusers' (reviewer.views.catalog)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse

from config.params import id_param
from extraction.catalog import scope
from extraction.models import ClauseType, ClauseTypeRetirement, questions
from reviewer import access
from reviewer.catalog_edits import set_retired
from reviewer.forms import ClauseTypeForm, RetireForm
from reviewer.views.catalog import edit_page, unique_slug

RETIREMENTS_SHOWN = 20


def _types(engagement):
    """The types the engagement sees (free questions are not catalog types), ``retired_here`` annotated."""
    return scope.with_retired(scope.visible(engagement).exclude(questions()), engagement)


def _type_of(engagement, type_id: int) -> ClauseType:
    """A type the engagement sees; another engagement's own type is a 404 like any row out of scope."""
    found = _types(engagement).filter(pk=type_id).first()
    if found is None:
        raise Http404("No such clause type in this engagement's catalog.")
    return found


def catalog(request, engagement_id: int):
    engagement = access.engagement_for(request.user, engagement_id)
    role = engagement.my_role  # type: ignore[attr-defined]  # annotated by reviewer.access
    can_manage = role == access.ADMIN
    form, status = ClauseTypeForm(), 200
    if request.method == "POST":
        if not can_manage:
            raise PermissionDenied("Only the engagement's admins change its catalog.")
        here = reverse("engagement-catalog", args=[engagement.pk])
        if "retire" in request.POST:  # retiring is confirmed on its own page
            wanted = id_param(request.POST.get("retire"))
            ct = _types(engagement).filter(pk=wanted).first() if wanted is not None else None
            return redirect("engagement-catalog-retire", engagement.pk, ct.pk) if ct else redirect(here)
        if "reactivate" in request.POST:  # set, not flip: a double click records it once
            wanted = id_param(request.POST.get("reactivate"))
            ct = _types(engagement).filter(pk=wanted).first() if wanted is not None else None
            if ct is not None:
                set_retired(engagement, ct, False, request.user)
                messages.success(request, f"{ct.name} is active again in {engagement.name}.")
            return redirect(here)
        form = ClauseTypeForm(request.POST)
        form.instance.engagement = engagement  # before validation: its name check knows whose type it is
        if form.is_valid():
            ct = form.save(commit=False)
            ct.slug = unique_slug(ct.name)
            ct.source = ClauseType.Source.CUSTOM
            ct.engagement = engagement
            ct.save()
            messages.success(request, f"Added clause type {ct.name} to {engagement.name}.")
            return redirect(here)
        status = 422
    types = _types(engagement).order_by("engagement_id", "source", "name")
    retirements = (
        ClauseTypeRetirement.objects.filter(engagement=engagement)
        .select_related("clause_type", "by")
        .order_by("-id")[:RETIREMENTS_SHOWN]
    )
    context = {
        "engagement": engagement,
        "role": role,
        "types": types,
        "form": form,
        "can_manage": can_manage,
        "retirements": retirements,
    }
    return render(request, "reviewer/engagement_catalog.html", context, status=status)


def edit(request, engagement_id: int, type_id: int):
    engagement = access.engagement_for(request.user, engagement_id, access.MANAGE_ROLES)
    clause_type = _type_of(engagement, type_id)
    if clause_type.engagement_id != engagement.pk:
        raise PermissionDenied("A global type's wording is edited by superusers on the global catalog.")
    return edit_page(request, clause_type, reverse("engagement-catalog", args=[engagement.pk]))


def retire(request, engagement_id: int, type_id: int):
    """The confirm step of retiring a type for this engagement: the page says what retiring does; a POST
    retires only with its confirm box ticked."""
    engagement = access.engagement_for(request.user, engagement_id, access.MANAGE_ROLES)
    clause_type = _type_of(engagement, type_id)
    back = reverse("engagement-catalog", args=[engagement.pk])
    form, status = RetireForm(), 200
    if request.method == "POST":
        form = RetireForm(request.POST)
        if form.is_valid():
            set_retired(engagement, clause_type, True, request.user)
            messages.success(request, f"{clause_type.name} is now retired in {engagement.name}.")
            return redirect(back)
        status = 422
    context = {
        "engagement": engagement,
        "clause_type": clause_type,
        "form": form,
        "back_url": back,
        "scope_said": f"{engagement.name} only; other engagements keep it",
    }
    return render(request, "reviewer/catalog_retire.html", context, status=status)
