"""The conversion of raw outputs stored in the results' (and streams') own rows, of imported
texts stored in the runs' own rows, and of the OS telemetry stored in the results' rows, into
tables of their own, partitioned by month (results.models.ResultOutput, StreamOutput,
RunImportText, ResultTelemetry).

It copies in batches of ids, a transaction each, in id order: no statement holds a lock for
longer than a batch, and a conversion that was interrupted resumes after the last id it copied
(the largest id in the new table) when run again. A text that is a bucket reference is copied as
it is, so its object is shared, not read. The old columns are dropped by the next migration, once
every batch has committed; until then they have a default, so that a release writing to the new
tables can insert results.
"""

from typing import NamedTuple

from django.db import connection, transaction

CONVERT_BATCH = 2000
# A result's telemetry is a JSON object a second (a few hundred bytes each, some hundred kB for
# a long level): fewer of them a transaction than of the raw outputs.
TELEMETRY_BATCH = 500


class DetailSource(NamedTuple):
    """Where a detail comes from and goes to. Names and SQL from the constants below, never from
    input."""

    table: str  # the new table
    key: str  # its key column: the owner's id
    source: str  # the old table
    column: str  # the old column, in the row `o` of the old table
    created: str  # SQL of the run's created_at for the row `o`
    into: str = "text"  # the new table's column for the value
    present: str = "o.{column} <> ''"  # SQL: the row `o` holds a value worth a row


_SOURCES = (
    DetailSource("results_resultoutput", "result_id", "results_result", "raw_output",
                 "SELECT run.created_at FROM results_run run WHERE run.id = o.run_id"),
    DetailSource("results_streamoutput", "stream_id", "results_streamresult", "raw_output",
                 "SELECT run.created_at FROM results_result r JOIN results_run run"
                 " ON run.id = r.run_id WHERE r.id = o.result_id"),
)  # fmt: skip
# The imported texts, from the runs' own rows to RunImportText: a later migration than the
# outputs', so converted on its own.
IMPORT_TEXT_SOURCES = (
    DetailSource("results_runimporttext", "run_id", "results_run", "import_text", "o.created_at"),
)
# The OS telemetry, from the results' own rows to ResultTelemetry: later again. An empty list
# (what a result without telemetry held) gets no row.
TELEMETRY_SOURCES = (
    DetailSource("results_resulttelemetry", "result_id", "results_result", "telemetry",
                 "SELECT run.created_at FROM results_run run WHERE run.id = o.run_id",
                 into="samples",
                 present="jsonb_typeof(o.{column}) = 'array' AND o.{column} <> '[]'::jsonb"),
)  # fmt: skip


def outputs_convert_batch(*, source: DetailSource, after: int, limit: int) -> int:
    """Copy the values of `source` held by the old rows with ids in (after, after + limit] in
    one transaction; returns how many were copied. Idempotent (ON CONFLICT DO NOTHING)."""
    table, key, old, column, created, into, present = source
    # Names and SQL from the constants above, never from input.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({key}, created_at, {into}) "  # noqa: S608
            f"SELECT o.id, ({created}), o.{column} FROM {old} o "
            f"WHERE o.id > %s AND o.id <= %s AND {present.format(column=column)} "
            f"ON CONFLICT ({key}, created_at) DO NOTHING",
            [after, after + limit],
        )
        return cursor.rowcount


def outputs_convert(
    *, sources: tuple[DetailSource, ...] = _SOURCES, batch: int = CONVERT_BATCH
) -> int:
    """Copy every value of `sources` (default: the raw outputs) still in the old columns, batch
    by batch from where a previous conversion stopped; returns how many were copied. Must run
    outside a transaction for its batches to commit one by one."""
    total = 0
    for source in sources:
        table, key, old = source.table, source.key, source.source
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT coalesce(max({key}), 0) FROM {table}")  # noqa: S608
            (after,) = cursor.fetchone()
            cursor.execute(f"SELECT coalesce(max(id), 0) FROM {old}")  # noqa: S608
            (last,) = cursor.fetchone()
        while after < last:
            total += outputs_convert_batch(source=source, after=after, limit=batch)
            after += batch
    return total


def import_texts_convert(*, batch: int = CONVERT_BATCH) -> int:
    """Copy the imported texts still in the runs' own rows into RunImportText, as
    `outputs_convert` does the raw outputs; returns how many were copied."""
    return outputs_convert(sources=IMPORT_TEXT_SOURCES, batch=batch)


def telemetry_convert(*, batch: int = TELEMETRY_BATCH) -> int:
    """Copy the OS telemetry still in the results' own rows into ResultTelemetry, as
    `outputs_convert` does the raw outputs; returns how many results' samples were copied."""
    return outputs_convert(sources=TELEMETRY_SOURCES, batch=batch)
