from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "benchhub.review"
    label = "review"
    verbose_name = "Team review"

    def ready(self) -> None:
        from benchhub.results.hooks import run_tag_filter_register
        from benchhub.review.selectors import runs_tagged

        run_tag_filter_register(runs_tagged)
