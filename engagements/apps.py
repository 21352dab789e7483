from django.apps import AppConfig


class EngagementsConfig(AppConfig):
    name = "engagements"
    verbose_name = "Engagements"
