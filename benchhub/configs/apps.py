from django.apps import AppConfig


class ConfigsConfig(AppConfig):
    name = "benchhub.configs"
    label = "configs"
