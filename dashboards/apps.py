from django.apps import AppConfig


class DashboardsConfig(AppConfig):
    name = "dashboards"
    verbose_name = "Manager dashboards"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # here, not at the top: the receivers import models, which load only once every app is registered
        from dashboards import signals  # noqa: F401  (connects the receivers)
