from django.apps import AppConfig


class BulkConfig(AppConfig):
    name = "bulk"
    verbose_name = "Bulk extraction (Message Batches)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from bulk import cancel

        cancel.connect()  # a batch whose requests are deleted is canceled at the API
