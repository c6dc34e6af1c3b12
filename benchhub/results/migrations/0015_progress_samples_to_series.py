"""Convert the progress samples stored a row per second into a row of arrays per result, in
batches that each commit (results.progress): the migration is not atomic, so an interrupted
one resumes where it stopped when run again, and no lock is held for longer than a batch."""

from django.db import migrations


def convert(apps, schema_editor):
    from benchhub.results.progress import progress_convert

    progress_convert()


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("results", "0014_progress_series_and_monthly_partitions"),
    ]

    operations = [migrations.RunPython(convert, migrations.RunPython.noop)]
