from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "benchhub.jobs"
    label = "jobs"
