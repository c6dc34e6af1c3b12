"""`manage.py steady_backfill`: compute the steady-state means (results.Result.steady_*) of runs
stored before those fields existed, in batches, until none is left."""

from django.core.management.base import BaseCommand, CommandParser

from benchhub.results.services import STEADY_BACKFILL_BATCH, runs_steady_backfill


class Command(BaseCommand):
    help = "Compute the stored steady-state means of runs uploaded before they existed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch", type=int, default=STEADY_BACKFILL_BATCH)

    def handle(self, *args, **options) -> None:
        total, after = 0, 0
        while done := runs_steady_backfill(after=after, limit=options["batch"]):
            total, after = total + len(done), done[-1]
            self.stdout.write(f"{total} runs so far")
        self.stdout.write(f"steady-state means computed for {total} runs")
