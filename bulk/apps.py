from django.apps import AppConfig


class BulkConfig(AppConfig):
    name = "bulk"
    verbose_name = "Bulk extraction (Message Batches)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # here, not at the top: the receivers import models, which load only once every app is registered
        from bulk import signals  # noqa: F401  (connects the receivers)
