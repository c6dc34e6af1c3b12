from django.apps import AppConfig


class BisectionsConfig(AppConfig):
    name = "benchhub.bisections"
    label = "bisections"

    def ready(self) -> None:
        from benchhub.bisections import receivers  # noqa: F401 - subscribes to jobs and results
