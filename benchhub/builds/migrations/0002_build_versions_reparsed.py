"""Re-parse every build's version with the one grammar (benchhub_runner.servers.versions).

Before it, "9.6" read as major 9, minor 6 (sorting as 9.0.6, and missing from the 9.6 series).
The key's shape is unchanged for every name the old grammar accepted; a name that no longer
parses keeps its stored fields. It parses with the grammar of the day it runs, on purpose: that
is the order every later grammar wants too.
"""

from django.db import migrations

from benchhub_runner.servers.versions import VersionError, version_parse

FIELDS = ("major", "minor", "stage", "stage_number", "snapshot_date", "sort_key")


def reparse(apps, schema_editor):
    Build = apps.get_model("builds", "Build")
    changed = []
    for build in Build.objects.only("id", "version", *FIELDS).iterator():
        try:
            parsed = version_parse(build.version)
        except VersionError:
            continue
        values = {name: getattr(parsed, name) for name in FIELDS}
        if any(getattr(build, name) != value for name, value in values.items()):
            for name, value in values.items():
                setattr(build, name, value)
            changed.append(build)
    Build.objects.bulk_update(changed, FIELDS, batch_size=500)


class Migration(migrations.Migration):
    dependencies = [("builds", "0001_initial")]

    operations = [migrations.RunPython(reparse, migrations.RunPython.noop)]
