"""Engagements and their members in the Django admin; an engagement is deleted with what came from it."""

from django.contrib import admin

from config.admin_readonly import DeletesWithReadOnlyRows
from engagements.models import Engagement, Membership


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1


@admin.register(Engagement)
class EngagementAdmin(DeletesWithReadOnlyRows):
    list_display = ("name", "client", "created_at")
    inlines = [MembershipInline]
