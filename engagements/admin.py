from django.contrib import admin

from engagements.models import Engagement, Membership


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1


@admin.register(Engagement)
class EngagementAdmin(admin.ModelAdmin):
    list_display = ("name", "client", "created_at")
    inlines = [MembershipInline]
