from django.apps import AppConfig


class CompareConfig(AppConfig):
    name = "benchhub.compare"
    label = "compare"
