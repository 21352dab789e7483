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


class DeletesWithReadOnlyRows(admin.ModelAdmin):
    """A parent (a document, an engagement) whose deletion takes read-only rows with it (pages, clauses, batch
    requests): those refuse edits and deletes of their own, not the deletion of their parent, as in the app.
    Rows that protect themselves (a clause with reviewer decisions) still keep the parent: Django lists
    them."""

    def get_deleted_objects(self, objs, request):
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        read_only = {
            model._meta.verbose_name
            for model, model_admin in self.admin_site._registry.items()
            if isinstance(model_admin, ReadOnlyAdmin)
        }
        return deleted, counts, perms_needed - read_only, protected
