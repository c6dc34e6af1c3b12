from django.apps import AppConfig


class ResultsConfig(AppConfig):
    name = "benchhub.results"
    label = "results"

    def ready(self) -> None:
        from benchhub.results import schema  # noqa: F401 - registers the OpenAPI extension
