"""The agent's per-second OS samples of each result in a table of their own, partitioned by
month of the run's created_at like the raw outputs (results.partitions), so that retention drops
whole months of them.

The table is created here; the next migration copies the samples in batches, and the one after
drops the old column. Until then the old column defaults to '[]' so that the new code, which no
longer writes it, can insert results.
"""

import django.db.models.deletion
from django.db import migrations, models

TABLE_SQL = """
CREATE TABLE results_resulttelemetry (
    result_id bigint NOT NULL
        REFERENCES results_result (id) DEFERRABLE INITIALLY DEFERRED,
    created_at timestamptz NOT NULL,
    samples jsonb NOT NULL,
    CONSTRAINT results_resulttelemetry_pkey PRIMARY KEY (result_id, created_at)
) PARTITION BY RANGE (created_at);
CREATE TABLE results_resulttelemetry_default PARTITION OF results_resulttelemetry DEFAULT;
ALTER TABLE results_result ALTER COLUMN telemetry SET DEFAULT '[]'::jsonb;
"""

REVERSE_SQL = """
DROP TABLE results_resulttelemetry;
ALTER TABLE results_result ALTER COLUMN telemetry DROP DEFAULT;
"""


def partitions_create(apps, schema_editor):
    from benchhub.results.partitions import partitions_ensure

    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT min(created_at) FROM results_run")
        (first,) = cursor.fetchone()
    partitions_ensure(first=first, tables=("results_resulttelemetry",))


STATE = [
    migrations.CreateModel(
        name="ResultTelemetry",
        fields=[
            (
                "result",
                models.OneToOneField(
                    on_delete=django.db.models.deletion.CASCADE,
                    primary_key=True,
                    related_name="os_telemetry",
                    serialize=False,
                    to="results.result",
                ),
            ),
            (
                "created_at",
                models.DateTimeField(help_text="the run's: the month partition it lives in"),
            ),
            (
                "samples",
                models.JSONField(help_text="OS samples taken every second while pgbench ran"),
            ),
        ],
        options={"db_table": "results_resulttelemetry"},
    ),
    migrations.RemoveField(model_name="result", name="telemetry"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("results", "0022_drop_old_import_text_column"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=STATE,
            database_operations=[migrations.RunSQL(TABLE_SQL, reverse_sql=REVERSE_SQL)],
        ),
        migrations.RunPython(partitions_create, migrations.RunPython.noop),
    ]
