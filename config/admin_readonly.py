"""A Django admin page that shows rows and changes none: for records whose only writer is the app
(a clause's text changes through a reviewer's correction, a page's offsets place verified citations)."""
from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
