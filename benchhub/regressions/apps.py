from django.apps import AppConfig


class RegressionsConfig(AppConfig):
    name = "benchhub.regressions"
    label = "regressions"
    verbose_name = "Regressions over history"
