"""Drop the raw output columns of results and streams, copied by the migration before: dropping
a column only marks it gone in the catalogue (PostgreSQL rewrites nothing), so the lock is
brief; the space returns as rows are rewritten or by VACUUM FULL."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("results", "0018_raw_outputs_to_their_tables"),
    ]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE results_result DROP COLUMN raw_output;"
            " ALTER TABLE results_streamresult DROP COLUMN raw_output;",
            reverse_sql="ALTER TABLE results_result ADD COLUMN raw_output text NOT NULL DEFAULT '';"
            " ALTER TABLE results_streamresult ADD COLUMN raw_output text NOT NULL DEFAULT '';",
        ),
    ]
