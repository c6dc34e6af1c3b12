from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "benchhub.review"
    label = "review"
    verbose_name = "Team review"
