"""The texts imported runs were read from, in a table of their own partitioned by month of the
run's created_at like the raw outputs (results.partitions), so that retention drops whole months
of them.

The table is created here; the next migration copies the texts in batches, and the one after
drops the old column. Until then the old column defaults to '' so that the new code, which no
longer writes it, can insert runs.
"""

import django.db.models.deletion
from django.db import migrations, models

import benchhub.blobs

TABLE_SQL = """
CREATE TABLE results_runimporttext (
    run_id bigint NOT NULL
        REFERENCES results_run (id) DEFERRABLE INITIALLY DEFERRED,
    created_at timestamptz NOT NULL,
    text text NOT NULL,
    CONSTRAINT results_runimporttext_pkey PRIMARY KEY (run_id, created_at)
) PARTITION BY RANGE (created_at);
CREATE TABLE results_runimporttext_default PARTITION OF results_runimporttext DEFAULT;
ALTER TABLE results_run ALTER COLUMN import_text SET DEFAULT '';
"""

REVERSE_SQL = """
DROP TABLE results_runimporttext;
ALTER TABLE results_run ALTER COLUMN import_text DROP DEFAULT;
"""


def partitions_create(apps, schema_editor):
    from benchhub.results.partitions import partitions_ensure

    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT min(created_at) FROM results_run")
        (first,) = cursor.fetchone()
    partitions_ensure(first=first, tables=("results_runimporttext",))


STATE = [
    migrations.CreateModel(
        name="RunImportText",
        fields=[
            (
                "run",
                models.OneToOneField(
                    on_delete=django.db.models.deletion.CASCADE,
                    primary_key=True,
                    related_name="imported",
                    serialize=False,
                    to="results.run",
                ),
            ),
            (
                "created_at",
                models.DateTimeField(help_text="the run's: the month partition it lives in"),
            ),
            ("text", benchhub.blobs.BlobTextField()),
        ],
        options={"db_table": "results_runimporttext"},
    ),
    migrations.RemoveField(model_name="run", name="import_text"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("results", "0019_drop_old_raw_output_columns"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=STATE,
            database_operations=[migrations.RunSQL(TABLE_SQL, reverse_sql=REVERSE_SQL)],
        ),
        migrations.RunPython(partitions_create, migrations.RunPython.noop),
    ]
