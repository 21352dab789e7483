from django.apps import AppConfig


class ExtractionConfig(AppConfig):
    name = "extraction"
    verbose_name = "Extraction"

    def ready(self) -> None:
        from extraction import signals  # noqa: F401  (connects the receivers)
