"""Monthly partitions of the detail tables, and retention that drops whole months of them.

The detail of a result (its per-second progress series and OS telemetry, its raw pgbench
outputs, its evidence with the CPU profile) and the text an imported run was read from are what
years of nightly runs (and imports) pile up and what nobody reads after a few months; the runs,
their results, the level aggregates and each repeat's steady-state means (every verdict's
inputs) stay in tables that are not partitioned. Each detail table is partitioned by month of
`created_at`, the run's, so a month is one table per detail: retention detaches it from its
parent and drops it, which frees its space at once and never deletes row by row (no dead
tuples, no vacuum, no long lock). A DEFAULT partition takes a row whose month has no partition
yet (beat creates them ahead, `partitions_ensure`), so an upload never fails for want of one;
retention never drops it.

With a bucket for large values (benchhub.blobs), a dropped month's raw outputs, profiles and
imported texts may be objects there: retention reads their references before it drops the
partition and, once the drop has committed, deletes the objects that no remaining row refers to
(objects are named by content, so another month may share one). A bucket that does not answer
then leaves them (logged): an object without a row costs space, never a wrong answer.
"""

import logging
from dataclasses import dataclass
from datetime import UTC, date, datetime

from django.db import connection, transaction
from django.db.backends.utils import CursorWrapper
from django.utils import timezone

from benchhub.blobs import BlobUnavailable, blob_delete, blob_storage
from benchhub.results import selectors
from benchhub.results.models import DetailPruning

logger = logging.getLogger(__name__)

# Partitioned detail tables and what their months hold, in words for the run page.
DETAIL_TABLES = {
    "results_progressseries": "per-second progress samples",
    "results_resultoutput": "raw pgbench outputs",
    "results_streamoutput": "raw pgbench outputs",
    "results_resultevidence": "evidence and profiles",
    "results_runimporttext": "imported texts",
    "results_resulttelemetry": "per-second OS telemetry",
}
# Where each detail table keeps a bucket reference: an expression giving the digest (hex) of a
# row's object, NULL for a value kept in the row.
BLOB_REFERENCES = {
    "results_resultoutput": "substring(text FROM '^bhblob:sha256:([0-9a-f]{64})$')",
    "results_streamoutput": "substring(text FROM '^bhblob:sha256:([0-9a-f]{64})$')",
    "results_resultevidence": "substring(profile->>'bhblob' FROM '^sha256:([0-9a-f]{64})$')",
    "results_runimporttext": "substring(text FROM '^bhblob:sha256:([0-9a-f]{64})$')",
}
MONTHS_AHEAD = 3


def month_start(when: datetime | date) -> date:
    return date(when.year, when.month, 1)


def month_add(month: date, months: int) -> date:
    index = month.year * 12 + month.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def partition_name(table: str, month: date) -> str:
    return f"{table}_p{month:%Y%m}"


def _bound(month: date) -> str:
    return datetime(month.year, month.month, 1, tzinfo=UTC).isoformat()


def partition_create(cursor: CursorWrapper, *, table: str, month: date) -> bool:
    """Create the month's partition of `table` unless it exists; returns whether it was created.
    A month whose rows already sit in the DEFAULT partition is left there (logged): PostgreSQL
    refuses a partition that would strand them, and they stay readable where they are."""
    name = partition_name(table, month)
    cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [name])
    if cursor.fetchone()[0]:
        return False
    try:
        with transaction.atomic():
            cursor.execute(
                f"CREATE TABLE {name} PARTITION OF {table} "
                f"FOR VALUES FROM ('{_bound(month)}') TO ('{_bound(month_add(month, 1))}')"
            )
    except Exception:
        logger.warning("no partition %s: rows of its month are in the default", name, exc_info=True)
        return False
    return True


def partitions_ensure(
    *,
    first: date | None = None,
    ahead: int = MONTHS_AHEAD,
    now: datetime | None = None,
    tables: tuple[str, ...] = tuple(DETAIL_TABLES),
) -> list[str]:
    """Create the monthly partitions of `tables` (default: every detail table) from `first`
    (default: this month) to `ahead` months past the current one; returns the names created.
    Idempotent. A migration names the tables that exist at its point of the history."""
    current = month_start(now or timezone.now())
    month, last = month_start(first) if first else current, month_add(current, ahead)
    created = []
    with connection.cursor() as cursor:
        while month <= last:
            for table in tables:
                if partition_create(cursor, table=table, month=month):
                    created.append(partition_name(table, month))
            month = month_add(month, 1)
    return created


@dataclass(frozen=True)
class Partition:
    table: str
    name: str
    month: date | None  # None: the DEFAULT partition


def partition_list(*, table: str) -> list[Partition]:
    """The partitions attached to `table`, from pg_inherits, by month."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = %s::regclass ORDER BY c.relname",
            [table],
        )
        names = [name for (name,) in cursor.fetchall()]
    parts = []
    for name in names:
        suffix = name.removeprefix(f"{table}_p")
        month = date(int(suffix[:4]), int(suffix[4:6]), 1) if suffix.isdigit() else None
        parts.append(Partition(table, name, month))
    return parts


def retention_apply(*, keep_months: int, now: datetime | None = None) -> list[date]:
    """Drop the detail partitions of months before the current one minus `keep_months` (0:
    keep only this month's), each with DETACH then DROP, and record each month pruned
    (DetailPruning); returns the months dropped. Runs, results, level aggregates and the
    steady-state means are untouched, so every verdict reads the same inputs after."""
    if keep_months < 0:
        raise ValueError("keep_months: must be 0 or more")
    cutoff = month_add(month_start(now or timezone.now()), -keep_months)
    dropped: dict[date, list[str]] = {}
    orphans: set[str] = set()
    for table, part in DETAIL_TABLES.items():
        for partition in partition_list(table=table):
            if partition.month is None or partition.month >= cutoff:
                continue
            with transaction.atomic(), connection.cursor() as cursor:
                # A table with deferred foreign-key checks still pending (rows written earlier
                # in the caller's transaction) cannot be dropped: run the checks now.
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                cursor.execute(f"ALTER TABLE {table} DETACH PARTITION {partition.name}")
                orphans |= _blob_digests(cursor, table=table, relation=partition.name)
                cursor.execute(f"DROP TABLE {partition.name}")
                _pruning_record(month=partition.month, part=part)
            dropped.setdefault(partition.month, []).append(part)
            logger.info("dropped %s", partition.name)
    if dropped:
        selectors.progress_points_forget()
    if orphans:
        blobs_collect(digests=orphans)
    return sorted(dropped)


def _blob_digests(cursor: CursorWrapper, *, table: str, relation: str) -> set[str]:
    """The bucket objects the rows of `relation` (a partition of `table`) refer to; none without
    a bucket, which could not delete them (and the scan would read every text in full)."""
    expression = BLOB_REFERENCES.get(table)
    if expression is None or blob_storage() is None:
        return set()
    # Names and expressions from the constants above and pg_inherits, never from input.
    sql = f"SELECT DISTINCT {expression} FROM {relation} WHERE {expression} IS NOT NULL"  # noqa: S608
    cursor.execute(sql)
    return {digest for (digest,) in cursor.fetchall()}


def blobs_collect(*, digests: set[str]) -> int:
    """Delete from the bucket those of `digests` that no row refers to any more; returns how
    many were deleted. Called after the rows referring to them were dropped and committed. A
    bucket that does not answer leaves them, logged."""
    left = set(digests)
    with connection.cursor() as cursor:
        for table, expression in BLOB_REFERENCES.items():
            if not left:
                break
            sql = f"SELECT DISTINCT {expression} FROM {table} WHERE {expression} = ANY(%s)"  # noqa: S608
            cursor.execute(sql, [sorted(left)])
            left -= {digest for (digest,) in cursor.fetchall()}
    try:
        return blob_delete(digests=sorted(left))
    except BlobUnavailable:
        logger.warning("left %d objects of dropped months in the bucket", len(left), exc_info=True)
        return 0


def _pruning_record(*, month: date, part: str) -> None:
    pruning, created = DetailPruning.objects.select_for_update().get_or_create(
        month=month, defaults={"parts": [part]}
    )
    if not created and part not in pruning.parts:
        pruning.parts = [*pruning.parts, part]
        pruning.pruned_at = timezone.now()
        pruning.save(update_fields=["parts", "pruned_at"])


def run_pruning(*, created_at: datetime) -> DetailPruning | None:
    """What retention dropped of a run created at `created_at`, or None."""
    month = month_start(created_at.astimezone(UTC))
    return DetailPruning.objects.filter(month=month).first()
