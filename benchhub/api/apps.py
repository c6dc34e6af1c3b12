from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "benchhub.api"
    label = "api"

    def ready(self) -> None:
        from benchhub.api import schema  # noqa: F401 - registers the OpenAPI extensions
