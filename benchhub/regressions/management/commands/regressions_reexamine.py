"""`manage.py regressions_reexamine`: withdraw the stored changes that span a split."""

from typing import Any

from django.core.management.base import BaseCommand

from benchhub.regressions.services import regressions_reexamine


class Command(BaseCommand):
    help = (
        "Re-examine every stored change under the current rule: one whose runs before and "
        "after lie either side of a split of its series (what the runs hold equal changed) "
        "is withdrawn, with the reason in its note and log; nothing is deleted. Idempotent."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        series, withdrawn = regressions_reexamine()
        self.stdout.write(f"{series} series re-examined, {withdrawn} changes withdrawn")
