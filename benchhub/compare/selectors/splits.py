"""What each point of a series holds equal besides its comparability key, read for
compare.splits (the History line and the regression detector): with_threads annotates the
points' query, held_runs reads the host facts and builds they name."""

from __future__ import annotations

from typing import Any

from django.db.models import OuterRef, QuerySet, Subquery

from benchhub.builds.models import Build
from benchhub.compare.splits import HeldRun
from benchhub.hosts.models import HostFacts
from benchhub.results.models import Result

# The columns of a series' point (a LevelAggregate row) that the splits read, with `with_threads`.
HELD_COLUMNS = (
    "run__pgbench_version",
    "run__warmup_s",
    "run__host_facts_id",
    "run__build_id",
    "run__tablespaces",
    "run__started_at",
    "comparability_key",
    "point_threads",
)


def with_threads(aggregates: QuerySet) -> QuerySet:
    """`aggregates` (LevelAggregate rows) annotated with `point_threads`: pgbench's threads at
    that level in the run's first repeat that recorded them. A subquery, no extra query."""
    threads = (
        Result.objects.filter(
            run_id=OuterRef("run_id"), clients=OuterRef("clients"), threads__isnull=False
        )
        .order_by("repeat")
        .values("threads")[:1]
    )
    return aggregates.annotate(point_threads=Subquery(threads))


def held_runs(rows: list[Any]) -> list[HeldRun]:
    """Each row's HeldRun (rows carry HELD_COLUMNS as attributes). Two queries: the host fact
    snapshots and the builds the rows name, each read once however many runs share it."""
    facts = HostFacts.objects.only("kernel", "extra", "sysctl").in_bulk(
        {row.run__host_facts_id for row in rows}
    )
    builds = Build.objects.only("provenance").in_bulk({row.run__build_id for row in rows})
    return [
        HeldRun(
            pgbench_version=row.run__pgbench_version,
            warmup_s=row.run__warmup_s,
            host_facts=facts[row.run__host_facts_id],
            build=builds[row.run__build_id],
            tablespaces=row.run__tablespaces or [],
            threads=row.point_threads,
            key=row.comparability_key,
        )
        for row in rows
    ]
