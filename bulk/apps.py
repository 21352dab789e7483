from django.apps import AppConfig


class BulkConfig(AppConfig):
    name = "bulk"
    verbose_name = "Bulk extraction (Message Batches)"
    default_auto_field = "django.db.models.BigAutoField"
