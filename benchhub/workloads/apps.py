from django.apps import AppConfig


class WorkloadsConfig(AppConfig):
    name = "benchhub.workloads"
    label = "workloads"
