"""Drop the results' telemetry column, copied by the migration before: dropping a column only
marks it gone in the catalogue (PostgreSQL rewrites nothing), so the lock is brief; the space
returns as rows are rewritten or by VACUUM FULL."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("results", "0024_telemetry_to_its_table"),
    ]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE results_result DROP COLUMN telemetry;",
            reverse_sql="ALTER TABLE results_result ADD COLUMN telemetry jsonb NOT NULL"
            " DEFAULT '[]'::jsonb;",
        ),
    ]
