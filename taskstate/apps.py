from django.apps import AppConfig


class TaskStateConfig(AppConfig):
    name = "taskstate"
    verbose_name = "Background task state"

    def ready(self):
        from taskstate import signals  # noqa: F401  (connects the Celery signal handlers)
