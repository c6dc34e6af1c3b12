"""Copy the OS samples from the results' rows into their monthly table, in batches that each
commit (results.outputs): the migration is not atomic, so an interrupted one resumes where it
stopped when run again, and no lock is held for longer than a batch."""

from django.db import migrations


def convert(apps, schema_editor):
    from benchhub.results.outputs import telemetry_convert

    telemetry_convert()


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("results", "0023_telemetry_partitioned_by_month"),
    ]

    operations = [migrations.RunPython(convert, migrations.RunPython.noop)]
