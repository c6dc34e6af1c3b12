from django.apps import AppConfig


class BuildsConfig(AppConfig):
    name = "benchhub.builds"
    label = "builds"
