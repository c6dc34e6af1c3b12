from django.apps import AppConfig


class BisectionsConfig(AppConfig):
    name = "benchhub.bisections"
    label = "bisections"
