"""`manage.py retention --keep-detail-months N`: drop the monthly partitions of per-second
progress samples, raw outputs and evidence (profiles included) older than N months, and their
bucket objects no row refers to any more (results.partitions); runs, results, level aggregates
and steady-state means stay. Without the flag, the setting
BENCHHUB_KEEP_DETAIL_MONTHS is used; with neither, nothing is dropped."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchhub.results.partitions import partitions_ensure, retention_apply


class Command(BaseCommand):
    help = "Drop whole months of per-second samples, raw outputs and evidence past N months."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--keep-detail-months",
            type=int,
            default=None,
            help="months of detail to keep before the current one",
        )

    def handle(self, *args, **options) -> None:
        keep = options["keep_detail_months"]
        if keep is None:
            keep = settings.BENCHHUB_KEEP_DETAIL_MONTHS
        if keep is None:
            raise CommandError("--keep-detail-months: give a number of months (or set "
                               "BENCHHUB_KEEP_DETAIL_MONTHS)")  # fmt: skip
        if keep < 0:
            raise CommandError("--keep-detail-months: must be 0 or more")
        partitions_ensure()
        months = retention_apply(keep_months=keep)
        for month in months:
            self.stdout.write(f"dropped the detail of {month:%Y-%m}")
        self.stdout.write(f"{len(months)} months dropped")
