"""`manage.py progress_convert`: convert progress samples stored a row per second into a row of
arrays per result (results.progress), a batch per transaction, until none is left. The
migration that introduced the new shape runs it too; this command finishes a conversion that
was interrupted, or converts in smaller batches."""

from django.core.management.base import BaseCommand, CommandParser

from benchhub.results.progress import CONVERT_BATCH, progress_convert_batch


class Command(BaseCommand):
    help = "Convert per-second progress rows into one row of arrays per result, in batches."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch", type=int, default=CONVERT_BATCH, help="results a batch")

    def handle(self, *args, **options) -> None:
        total = 0
        while done := progress_convert_batch(limit=options["batch"]):
            total += done
            self.stdout.write(f"{total} results so far")
        self.stdout.write(f"progress of {total} results converted")
