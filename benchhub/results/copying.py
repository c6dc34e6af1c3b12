"""Rows written with COPY inside the caller's transaction: an upload's results, progress
series, OS telemetry and raw outputs.

An upload carries thousands of progress samples and tens of results. A model instance per
sample for bulk_create took most of an upload's time (and a row per sample most of the COPY's:
they are now a row of arrays per result), and the INSERT of the results (one
statement with a thousand parameters, compiled by the ORM, then split and bound by psycopg)
cost several times their COPY (bench/, ingest). COPY is the cheapest way PostgreSQL takes rows,
and it is what the ingest bench's floor does.
"""

from collections.abc import Iterable, Sequence
from datetime import datetime
from operator import itemgetter
from typing import Any, cast

from benchhub_runner.payload import PROGRESS_FIELDS
from django.db import connection, models

from benchhub.results.models import ProgressSeries, ResultOutput, ResultTelemetry, StreamOutput


def instances_copy(instances: Sequence[models.Model]) -> None:
    """Write new, unsaved instances of one model with COPY, as bulk_create would: every
    concrete field's value prepared by the field itself (pre_save, get_db_prep_save: defaults,
    JSON, arrays), ids taken from the table's sequence and set on the instances, which are then
    saved instances. A row the database refuses raises Django's IntegrityError or DataError, as
    the ORM's own writes do."""
    if not instances:
        return
    meta = type(instances[0])._meta
    fields = list(meta.concrete_fields)
    quote = connection.ops.quote_name
    columns = ", ".join(quote(cast(str, f.column)) for f in fields)  # concrete: a column each
    with connection.wrap_database_errors, connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [meta.db_table, meta.pk.column, len(instances)],
        )
        for instance, (pk,) in zip(instances, cursor.fetchall(), strict=True):
            instance.pk = pk
        with cursor.cursor.copy(f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN") as copy:
            for instance in instances:
                copy.write_row(
                    [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
                )
    for instance in instances:
        instance._state.adding = False
        instance._state.db = connection.alias


def progress_copy(series: Iterable[tuple[int, datetime, list[dict[str, Any]]]]) -> None:
    """Write each result's progress as one row of arrays (ProgressSeries) with COPY, in the
    caller's transaction: (result id, the run's created_at, validated samples). The samples are
    stored in time order; a result without samples gets no row."""
    table = ProgressSeries._meta.db_table
    columns = ", ".join(("result_id", "created_at", *PROGRESS_FIELDS))
    with (
        connection.wrap_database_errors,
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy,
    ):
        for result_id, created_at, samples in series:
            if samples:
                copy.write_row((result_id, created_at, *series_arrays(samples)))


def series_arrays(samples: list[dict[str, Any]]) -> list[list[Any]]:
    """Samples (dicts holding every PROGRESS_FIELDS key) as one list per field, in time order."""
    ordered = sorted(samples, key=itemgetter("t"))
    return [[sample[name] for sample in ordered] for name in PROGRESS_FIELDS]


def details_copy(
    model: type[ResultOutput] | type[StreamOutput] | type[ResultTelemetry],
    values: Iterable[tuple[int, datetime, Any]],
    *,
    field: str = "text",
) -> None:
    """Write one detail row per owner with COPY, in the caller's transaction: (result or stream
    id, the run's created_at, the value of `field`): raw outputs (ResultOutput, StreamOutput;
    a large text goes to the bucket when one is configured) or OS samples (ResultTelemetry,
    `samples`, kept in the order sent). Each value is prepared by its field; an empty one gets
    no row, and none at all (every import's telemetry) no COPY."""
    rows = [row for row in values if row[2]]
    if not rows:
        return
    meta = model._meta
    prepared = cast(models.Field, meta.get_field(field))  # a concrete column, not a relation
    columns = f"{meta.pk.column}, created_at, {field}"
    with (
        connection.wrap_database_errors,
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY {meta.db_table} ({columns}) FROM STDIN") as copy,
    ):
        for owner_id, created_at, value in rows:
            copy.write_row((owner_id, created_at, prepared.get_db_prep_save(value, connection)))
