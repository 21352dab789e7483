from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "ingest"
    verbose_name = "Ingest"

    def ready(self):
        from ingest import removal, signals  # noqa: F401  (signals connects its receivers)

        removal.connect()  # a deleted document's file is removed with it
