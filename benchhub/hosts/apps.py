from django.apps import AppConfig


class HostsConfig(AppConfig):
    name = "benchhub.hosts"
    label = "hosts"
