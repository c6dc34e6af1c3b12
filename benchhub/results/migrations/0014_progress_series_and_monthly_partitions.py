"""Progress samples as one row of arrays per result, and the detail tables partitioned by month.

The new progress table and the rebuilt evidence table are partitioned by month of the run's
created_at (results.partitions). The evidence table is rebuilt in one statement: it is young and
holds a row per result at most. The progress rows are converted by the next migration, in
batches outside one long transaction.
"""

import django.contrib.postgres.fields
import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

PROGRESS_SQL = """
CREATE TABLE results_progressseries (
    result_id bigint NOT NULL
        REFERENCES results_result (id) DEFERRABLE INITIALLY DEFERRED,
    created_at timestamptz NOT NULL,
    t double precision[] NOT NULL,
    tps double precision[] NOT NULL,
    latency_ms double precision[] NOT NULL,
    stddev_ms double precision[] NOT NULL,
    failed bigint[] NOT NULL,
    skipped bigint[] NOT NULL,
    lag_ms double precision[] NOT NULL,
    CONSTRAINT results_progressseries_pkey PRIMARY KEY (result_id, created_at),
    -- What a row per second had by its columns: one value of each figure per line, and a time.
    CONSTRAINT progress_series_aligned CHECK (
        cardinality(tps) = cardinality(t) AND cardinality(latency_ms) = cardinality(t)
        AND cardinality(stddev_ms) = cardinality(t) AND cardinality(failed) = cardinality(t)
        AND cardinality(skipped) = cardinality(t) AND cardinality(lag_ms) = cardinality(t)),
    CONSTRAINT progress_series_times CHECK (array_position(t, NULL) IS NULL AND 0 <= ALL (t))
) PARTITION BY RANGE (created_at);
CREATE TABLE results_progressseries_default PARTITION OF results_progressseries DEFAULT;
"""

# Constraint names of their own: the old table keeps its own until it is dropped.
EVIDENCE_SQL = """
ALTER TABLE results_resultevidence RENAME TO results_resultevidence_old;
CREATE TABLE results_resultevidence (
    result_id bigint NOT NULL
        CONSTRAINT results_resultevidence_month_result_fk
        REFERENCES results_result (id) DEFERRABLE INITIALLY DEFERRED,
    created_at timestamptz NOT NULL,
    stats jsonb NULL,
    waits jsonb NULL,
    latency jsonb NULL,
    statements jsonb NULL,
    profile jsonb NULL,
    unavailable jsonb NOT NULL,
    CONSTRAINT results_resultevidence_month_pkey PRIMARY KEY (result_id, created_at)
) PARTITION BY RANGE (created_at);
CREATE TABLE results_resultevidence_default PARTITION OF results_resultevidence DEFAULT;
"""

EVIDENCE_COPY_SQL = """
INSERT INTO results_resultevidence
    (result_id, created_at, stats, waits, latency, statements, profile, unavailable)
SELECT e.result_id, run.created_at, e.stats, e.waits, e.latency, e.statements, e.profile,
       e.unavailable
FROM results_resultevidence_old e
JOIN results_result r ON r.id = e.result_id
JOIN results_run run ON run.id = r.run_id;
DROP TABLE results_resultevidence_old;
"""


def partitions_create(apps, schema_editor):
    from benchhub.results.partitions import partitions_ensure

    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT min(created_at) FROM results_run")
        (first,) = cursor.fetchone()
    partitions_ensure(first=first, tables=("results_progressseries", "results_resultevidence"))


# The table itself is created by PROGRESS_SQL: Django's DDL has no PARTITION BY.
PROGRESS_SERIES = migrations.CreateModel(
    name="ProgressSeries",
    fields=[
        (
            "result",
            models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                primary_key=True,
                related_name="progress_series",
                serialize=False,
                to="results.result",
            ),
        ),
        (
            "created_at",
            models.DateTimeField(help_text="the run's: the month partition it lives in"),
        ),
        ("t", django.contrib.postgres.fields.ArrayField(base_field=models.FloatField(), size=None)),
        ("tps", django.contrib.postgres.fields.ArrayField(base_field=models.FloatField(null=True), size=None)),
        ("latency_ms", django.contrib.postgres.fields.ArrayField(base_field=models.FloatField(null=True), size=None)),
        ("stddev_ms", django.contrib.postgres.fields.ArrayField(base_field=models.FloatField(null=True), size=None)),
        ("failed", django.contrib.postgres.fields.ArrayField(base_field=models.BigIntegerField(null=True), size=None)),
        ("skipped", django.contrib.postgres.fields.ArrayField(base_field=models.BigIntegerField(null=True), size=None)),
        ("lag_ms", django.contrib.postgres.fields.ArrayField(base_field=models.FloatField(null=True), size=None)),
    ],
    options={"db_table": "results_progressseries"},
)


class Migration(migrations.Migration):
    dependencies = [
        ("results", "0013_blob_fields"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[PROGRESS_SERIES],
            database_operations=[
                migrations.RunSQL(PROGRESS_SQL, reverse_sql="DROP TABLE results_progressseries")
            ],
        ),
        migrations.CreateModel(
            name="DetailPruning",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("month", models.DateField(help_text="first day of the month, UTC", unique=True)),
                (
                    "parts",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=50),
                        help_text="what was dropped",
                        size=None,
                    ),
                ),
                ("pruned_at", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={"ordering": ["month"]},
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(
                    model_name="resultevidence",
                    name="created_at",
                    field=models.DateTimeField(
                        default=django.utils.timezone.now,
                        help_text="the run's: the month partition it lives in",
                    ),
                    preserve_default=False,
                ),
            ],
            database_operations=[migrations.RunSQL(EVIDENCE_SQL)],
        ),
        migrations.RunPython(partitions_create, migrations.RunPython.noop),
        migrations.RunSQL(EVIDENCE_COPY_SQL),
    ]
