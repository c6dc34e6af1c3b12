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
from itertools import islice
from operator import itemgetter, lt
from typing import Any, cast

import orjson
from benchhub_runner.results.payload import PROGRESS_FIELDS
from django.db import connection, models

from benchhub.results.models import ProgressSeries, ResultOutput, ResultTelemetry, StreamOutput


def instances_copy(instances: Sequence[models.Model]) -> None:
    """Write new, unsaved instances of one model with COPY, as bulk_create would: every
    concrete field's value prepared by the field itself (pre_save, get_db_prep_save: defaults,
    JSON, arrays), or as it is where that preparation would return it unchanged (_prepared);
    ids taken from the table's sequence and set on the instances, which are then saved
    instances. A row the database refuses raises Django's IntegrityError or DataError, as
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
        plan = [(f, _plain_types(f)) for f in fields]
        with cursor.cursor.copy(f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN") as copy:
            for instance in instances:
                copy.write_row([_prepared(instance, f, kinds) for f, kinds in plan])
    for instance in instances:
        instance._state.adding = False
        instance._state.db = connection.alias


# A field of these classes (exactly: a subclass may prepare its values its own way) stores a
# value of the listed types as it is: its pre_save returns the attribute and its preparation
# returns the same value (int(), float(), str() of one already so). The COPY's own dumpers
# write these types. Anything else (JSON, arrays, an int handed to an IntegerField as a float,
# a lazy string) is prepared by the field, as bulk_create would.
PLAIN_FIELDS: dict[type[models.Field], frozenset[type]] = {
    **dict.fromkeys(
        (
            models.BigAutoField,
            models.AutoField,
            models.IntegerField,
            models.BigIntegerField,
            models.PositiveIntegerField,
            models.PositiveBigIntegerField,
            models.PositiveSmallIntegerField,
            models.SmallIntegerField,
        ),
        frozenset((int, type(None))),
    ),
    models.FloatField: frozenset((float, type(None))),
    models.BooleanField: frozenset((bool, type(None))),
    models.CharField: frozenset((str, type(None))),
    models.TextField: frozenset((str, type(None))),
}


MISSING = object()


def _plain_types(field: models.Field) -> frozenset[type]:
    """The types `field` stores as they are (see PLAIN_FIELDS); none for any other field."""
    if isinstance(field, models.ForeignKey):
        target = field.target_field
        return _plain_types(target) if type(target) in PLAIN_FIELDS else frozenset()
    return PLAIN_FIELDS.get(type(field), frozenset())


def _prepared(instance: models.Model, field: models.Field, plain: frozenset[type]) -> Any:
    """The value `field` writes for `instance`: its attribute when of a plain type, else what
    the field prepares (pre_save, get_db_prep_save)."""
    # A deferred attribute is absent from __dict__: the field's own pre_save reads it.
    value = instance.__dict__.get(field.attname, MISSING)
    if type(value) in plain:
        return value
    return field.get_db_prep_save(field.pre_save(instance, True), connection)


def progress_copy(series: Iterable[tuple[int, datetime, list[list[Any]]]]) -> None:
    """Write each result's progress as one row of arrays (ProgressSeries) with COPY, in the
    caller's transaction: (result id, the run's created_at, its samples as series_arrays
    gives them, in time order); a result without samples gets no row."""
    table = ProgressSeries._meta.db_table
    columns = ", ".join(("result_id", "created_at", *PROGRESS_FIELDS))
    with (
        connection.wrap_database_errors,
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy,
    ):
        for result_id, created_at, arrays in series:
            if arrays[0]:
                copy.write_row((result_id, created_at, *map(array_literal, arrays)))


def series_arrays(samples: list[dict[str, Any]]) -> list[list[Any]]:
    """Samples (dicts holding every PROGRESS_FIELDS key) as one list per field, in time order."""
    # Validated samples carry their columns (api.fields.Records); an agent sends them in time
    # order, so those columns are the arrays.
    columns = getattr(samples, "columns", None)
    if columns is not None and PROGRESS_SET.issubset(columns):
        t = columns["t"]
        if all(map(lt, t, islice(t, 1, None))):
            return [columns[name] for name in PROGRESS_FIELDS]
    ordered = sorted(samples, key=itemgetter("t"))
    return [list(map(itemgetter(name), ordered)) for name in PROGRESS_FIELDS]


PROGRESS_SET = frozenset(PROGRESS_FIELDS)
NUMBERS = frozenset((int, float, type(None)))


def array_literal(values: list[Any]) -> str | list[Any]:
    """A list of numbers and None as PostgreSQL's array literal (`{1.5,null,3}`); any other
    list as it is, for psycopg's own dumper (and its errors).

    psycopg's list dumper looks at every element of an array for characters to quote, in
    Python: for an upload's 22,680 progress values it was most of the upload's COPY. Numbers
    need no quoting: orjson writes the list in C, each float as the shortest text that reads
    back as the same double, and PostgreSQL's array input reads JSON's `null` as NULL (the word
    is case-insensitive). NaN and infinities never get here (the upload refuses them), nor an
    integer past bigint (orjson refuses it: psycopg's dumper then raises as before)."""
    if not NUMBERS.issuperset(map(type, values)):
        return values
    try:
        text = orjson.dumps(values)
    except orjson.JSONEncodeError:
        return values
    return "{" + text[1:-1].decode() + "}"


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
