from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "benchhub.dashboard"
    label = "dashboard"
