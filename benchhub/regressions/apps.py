from django.apps import AppConfig


class RegressionsConfig(AppConfig):
    name = "benchhub.regressions"
    label = "regressions"
    verbose_name = "Regressions over history"

    def ready(self) -> None:
        from benchhub.regressions import receivers  # noqa: F401 - subscribes to results
