"""Drop the runs' import_text column, copied by the migration before: dropping a column only
marks it gone in the catalogue (PostgreSQL rewrites nothing), so the lock is brief; the space
returns as rows are rewritten or by VACUUM FULL."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("results", "0021_import_texts_to_their_table"),
    ]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE results_run DROP COLUMN import_text;",
            reverse_sql="ALTER TABLE results_run ADD COLUMN import_text text NOT NULL DEFAULT '';",
        ),
    ]
