from django.apps import AppConfig


class TaskStateConfig(AppConfig):
    name = "taskstate"
    verbose_name = "Background task state"

    def ready(self):
        # here, not at the top: the handlers import models, which load only once every app is registered
        from taskstate import signals  # noqa: F401  (connects the Celery signal handlers)
