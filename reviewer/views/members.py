"""Members of an engagement (admins add people, change roles, remove them)."""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.shortcuts import redirect, render

from engagements.models import Membership, Role
from reviewer import access
from reviewer.forms import MemberForm, RoleForm


def members(request, engagement_id: int):
    engagement = access.engagement_for(request.user, engagement_id, access.MANAGE_ROLES)
    add_form, status = MemberForm(), 200
    if request.method == "POST":
        if request.POST.get("action") == "add":
            add_form = MemberForm(request.POST)
            if add_form.is_valid():
                _, created = Membership.objects.get_or_create(
                    user=add_form.user,
                    engagement=engagement,
                    defaults={"role": add_form.cleaned_data["role"]},
                )
                if created:
                    messages.success(
                        request, f"Added {add_form.user.username} as {add_form.cleaned_data['role']}."
                    )
                    return redirect("engagement-members", engagement.pk)
                add_form.add_error("username", f"{add_form.user.username} is already a member.")
            status = 422
        else:
            error = _change(engagement, RoleForm(request.POST), request.user)
            if error:
                messages.error(request, error)
            return redirect("engagement-members", engagement.pk)
    rows = Membership.objects.filter(engagement=engagement).select_related("user").order_by("user__username")
    role = engagement.my_role  # type: ignore[attr-defined]  # annotated by reviewer.access
    return render(
        request,
        "reviewer/members.html",
        {
            "engagement": engagement,
            "role": role,
            "rows": rows,
            "add_form": add_form,
            "roles": Role.choices,
        },
        status=status,
    )


def _change(engagement, form: RoleForm, actor) -> str:
    if not form.is_valid():
        return "Choose a member and a role."
    with transaction.atomic():
        rows = list(Membership.objects.select_for_update().filter(engagement=engagement))
        row = next((m for m in rows if m.pk == form.cleaned_data["membership"]), None)
        if row is None:
            return "No such member."
        admins = [m for m in rows if m.role == Role.ADMIN]
        removing = form.cleaned_data["remove"]
        new_role = form.cleaned_data["role"] or row.role
        if row.role == Role.ADMIN and len(admins) == 1 and (removing or new_role != Role.ADMIN):
            return "An engagement needs at least one admin: add another admin first."
        if removing:
            row.delete()
        elif new_role != row.role:
            row.role = new_role
            row.save(update_fields=["role"])
    return ""
