from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "ingest"
    verbose_name = "Ingest"

    def ready(self):
        from ingest import removal

        removal.connect()  # a deleted document's file is removed with it
