"""The conversion of raw outputs stored in the results' (and streams') own rows, and of imported
texts stored in the runs' own rows, into tables of their own, partitioned by month
(results.models.ResultOutput, StreamOutput, RunImportText).

It copies in batches of ids, a transaction each, in id order: no statement holds a lock for
longer than a batch, and a conversion that was interrupted resumes after the last id it copied
(the largest id in the new table) when run again. A text that is a bucket reference is copied as
it is, so its object is shared, not read. The old columns are dropped by the next migration, once
every batch has committed; until then they have a default, so that a release writing to the new
tables can insert results.
"""

from django.db import connection, transaction

CONVERT_BATCH = 2000

# (new table, its key column, the old table, the old column, the SQL of the run's created_at
# for a row `o` of the old table).
_SOURCES = (
    ("results_resultoutput", "result_id", "results_result", "raw_output",
     "SELECT run.created_at FROM results_run run WHERE run.id = o.run_id"),
    ("results_streamoutput", "stream_id", "results_streamresult", "raw_output",
     "SELECT run.created_at FROM results_result r JOIN results_run run ON run.id = r.run_id"
     " WHERE r.id = o.result_id"),
)  # fmt: skip
# The imported texts, from the runs' own rows to RunImportText: a later migration than the
# outputs', so converted on its own.
IMPORT_TEXT_SOURCES = (
    ("results_runimporttext", "run_id", "results_run", "import_text", "o.created_at"),
)


def outputs_convert_batch(*, table: str, key: str, source: str, column: str, created: str,
                          after: int, limit: int) -> int:  # fmt: skip
    """Copy the non-empty texts in `column` of the `source` rows with ids in
    (after, after + limit] in one transaction; returns how many were copied. Idempotent (ON
    CONFLICT DO NOTHING)."""
    # Names from the constants above, never from input.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({key}, created_at, text) "  # noqa: S608
            f"SELECT o.id, ({created}), o.{column} FROM {source} o "
            f"WHERE o.id > %s AND o.id <= %s AND o.{column} <> '' "
            f"ON CONFLICT ({key}, created_at) DO NOTHING",
            [after, after + limit],
        )
        return cursor.rowcount


def outputs_convert(
    *, sources: tuple[tuple[str, str, str, str, str], ...] = _SOURCES, batch: int = CONVERT_BATCH
) -> int:
    """Copy every text of `sources` (default: the raw outputs) still in the old columns, batch by
    batch from where a previous conversion stopped; returns how many were copied. Must run
    outside a transaction for its batches to commit one by one."""
    total = 0
    for table, key, source, column, created in sources:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT coalesce(max({key}), 0) FROM {table}")  # noqa: S608
            (after,) = cursor.fetchone()
            cursor.execute(f"SELECT coalesce(max(id), 0) FROM {source}")  # noqa: S608
            (last,) = cursor.fetchone()
        while after < last:
            total += outputs_convert_batch(
                table=table, key=key, source=source, column=column, created=created,
                after=after, limit=batch,
            )  # fmt: skip
            after += batch
    return total


def import_texts_convert(*, batch: int = CONVERT_BATCH) -> int:
    """Copy the imported texts still in the runs' own rows into RunImportText, as
    `outputs_convert` does the raw outputs; returns how many were copied."""
    return outputs_convert(sources=IMPORT_TEXT_SOURCES, batch=batch)
