"""Raw pgbench outputs in tables of their own, partitioned by month of the run's created_at like
the progress series (results.partitions), so that retention drops whole months of them.

The tables are created here; the next migration copies the outputs in batches, and the one after
drops the old columns. Until then the old columns default to '' so that the new code, which no
longer writes them, can insert results.
"""

import django.db.models.deletion
from django.db import migrations, models

import benchhub.blobs

TABLES_SQL = """
CREATE TABLE results_resultoutput (
    result_id bigint NOT NULL
        REFERENCES results_result (id) DEFERRABLE INITIALLY DEFERRED,
    created_at timestamptz NOT NULL,
    text text NOT NULL,
    CONSTRAINT results_resultoutput_pkey PRIMARY KEY (result_id, created_at)
) PARTITION BY RANGE (created_at);
CREATE TABLE results_resultoutput_default PARTITION OF results_resultoutput DEFAULT;
CREATE TABLE results_streamoutput (
    stream_id bigint NOT NULL
        REFERENCES results_streamresult (id) DEFERRABLE INITIALLY DEFERRED,
    created_at timestamptz NOT NULL,
    text text NOT NULL,
    CONSTRAINT results_streamoutput_pkey PRIMARY KEY (stream_id, created_at)
) PARTITION BY RANGE (created_at);
CREATE TABLE results_streamoutput_default PARTITION OF results_streamoutput DEFAULT;
ALTER TABLE results_result ALTER COLUMN raw_output SET DEFAULT '';
ALTER TABLE results_streamresult ALTER COLUMN raw_output SET DEFAULT '';
"""

REVERSE_SQL = """
DROP TABLE results_resultoutput;
DROP TABLE results_streamoutput;
ALTER TABLE results_result ALTER COLUMN raw_output DROP DEFAULT;
ALTER TABLE results_streamresult ALTER COLUMN raw_output DROP DEFAULT;
"""


def partitions_create(apps, schema_editor):
    from benchhub.results.partitions import partitions_ensure

    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT min(created_at) FROM results_run")
        (first,) = cursor.fetchone()
    partitions_ensure(first=first, tables=("results_resultoutput", "results_streamoutput"))


STATE = [
    migrations.CreateModel(
        name="ResultOutput",
        fields=[
            (
                "result",
                models.OneToOneField(
                    on_delete=django.db.models.deletion.CASCADE,
                    primary_key=True,
                    related_name="output",
                    serialize=False,
                    to="results.result",
                ),
            ),
            (
                "created_at",
                models.DateTimeField(help_text="the run's: the month partition it lives in"),
            ),
            ("text", benchhub.blobs.BlobTextField()),
        ],
        options={"db_table": "results_resultoutput"},
    ),
    migrations.CreateModel(
        name="StreamOutput",
        fields=[
            (
                "stream",
                models.OneToOneField(
                    on_delete=django.db.models.deletion.CASCADE,
                    primary_key=True,
                    related_name="output",
                    serialize=False,
                    to="results.streamresult",
                ),
            ),
            (
                "created_at",
                models.DateTimeField(help_text="the run's: the month partition it lives in"),
            ),
            ("text", benchhub.blobs.BlobTextField()),
        ],
        options={"db_table": "results_streamoutput"},
    ),
    migrations.RemoveField(model_name="result", name="raw_output"),
    migrations.RemoveField(model_name="streamresult", name="raw_output"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("results", "0016_run_tablespaces"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=STATE,
            database_operations=[migrations.RunSQL(TABLES_SQL, reverse_sql=REVERSE_SQL)],
        ),
        migrations.RunPython(partitions_create, migrations.RunPython.noop),
    ]
