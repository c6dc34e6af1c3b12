"""`manage.py regressions_detect`: detect changes over every stored series (a backfill)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from benchhub.regressions.services import history_detect


class Command(BaseCommand):
    help = (
        "Detect changes in the history of every series stored, as uploads do for their own "
        "series; idempotent. Subscribers are not told unless --notify."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--notify", action="store_true", help="tell subscribers of new ones")

    def handle(self, *args: Any, notify: bool, **options: Any) -> None:
        series, found = history_detect(notify=notify)
        self.stdout.write(f"{series} series read, {found} new changes stored")
