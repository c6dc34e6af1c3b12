from django.apps import AppConfig


class ResultsConfig(AppConfig):
    name = "benchhub.results"
    label = "results"
