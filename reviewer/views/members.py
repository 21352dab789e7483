"""Members of an engagement: its admins add people by username or invite them (an account without a
password, and a one-time link to choose one), change roles and remove people."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.db import transaction
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from engagements.models import Membership, Role
from reviewer import access
from reviewer.forms import InviteForm, MemberForm, RoleForm


def members(request, engagement_id: int):
    engagement = access.engagement_for(request.user, engagement_id, access.MANAGE_ROLES)
    add_form, invite_form, invite_link, status = MemberForm(), InviteForm(), "", 200
    if request.method == "POST":
        if request.POST.get("action") == "invite":
            invite_form = InviteForm(request.POST)
            if invite_form.is_valid():
                invite_link = _invite(request, engagement, invite_form.cleaned_data)
                messages.success(
                    request,
                    f"Invited {invite_form.cleaned_data['username']} as {invite_form.cleaned_data['role']}: "
                    "send them the link below (shown once).",
                )
                invite_form = InviteForm()
            else:
                status = 422
        elif request.POST.get("action") == "add":
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
            "invite_form": invite_form,
            "invite_link": invite_link,
            "roles": Role.choices,
        },
        status=status,
    )


def _invite(request, engagement, data: dict) -> str:
    """Make the invited account (no usable password) and its membership; the absolute one-time link where
    they choose a password (it stops working once they have one)."""
    with transaction.atomic():
        user = get_user_model().objects.create_user(data["username"], email=data["email"] or "")
        user.set_unusable_password()
        user.save(update_fields=["password"])
        Membership.objects.create(user=user, engagement=engagement, role=data["role"])
    path = reverse(
        "password_reset_confirm",
        kwargs={
            "uidb64": urlsafe_base64_encode(force_bytes(user.pk)),
            "token": default_token_generator.make_token(user),
        },
    )
    return request.build_absolute_uri(path)


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
