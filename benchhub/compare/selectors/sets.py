"""Each compared version's set of runs: the runs of its build under its comparability key that
hold equal what can move tps (runs_pooled), and their per-level aggregates over the repeats of
the whole set (pooled_levels). One query each."""

from __future__ import annotations

from typing import NamedTuple

from django.db.models import Q

from benchhub.compare.describe import held_differences, threads_difference
from benchhub.results.hooks import runs_tagged
from benchhub.results.models import LevelAggregate, Result, Run
from benchhub.results.selectors import level_aggregate_of

MAX_POOLED_RUNS = 50
# The columns read of a run that may join a set (runs_pooled), besides its host and host facts.
POOLED_COLUMNS = (
    "id",
    "uuid",
    "build_id",
    "comparability_key",
    "started_at",
    "job_id",
    "host_id",
    "pgbench_version",
    "warmup_s",
    "tablespaces",
)


def runs_pooled(
    runs: list[Run],
    *,
    include_invalid: bool = False,
    same_hardware: bool = False,
    left_out: dict[int, list[tuple[Run, list[str]]]] | None = None,
    include_unlike: bool = False,
    tags: list[str] | None = None,
) -> dict[int, list[Run]]:
    """For each run, the set of runs everything its version shows is made of: itself, then
    every other run of its build under its comparability key on its own host (`same_hardware`:
    on any host whose hardware shares the key), newest first, at most MAX_POOLED_RUNS. Hosts
    with the same hardware facts share a key, so without the host a twin host's runs would
    join unasked. A run that differs from the one standing for the version in what can move tps
    besides the key (describe.HELD_IN_A_SET: pgbench client major, kernel, warm-up, tablespaces,
    huge pages, CPU governor) stays out, recorded with its differences in `left_out` (run id ->
    [(run, differences)]); with `include_unlike` it joins the set all the same, and is recorded
    there too. `tags` (review's): only runs carrying every one of them join. One query."""
    pooled: dict[int, list[Run]] = {run.id: [run] for run in runs}
    if not runs:
        return pooled
    same = Q()
    for run in runs:
        mine = Q(build_id=run.build_id, comparability_key=run.comparability_key)
        same |= mine if same_hardware else mine & Q(host_id=run.host_id)
    others = runs_tagged(Run.objects.filter(same), tags=tags or []).exclude(
        pk__in=[run.id for run in runs]
    )
    if not include_invalid:
        others = others.filter(invalid=False)
    rows = others.select_related("host", "host_facts").only(
        *POOLED_COLUMNS,
        "host__name",
        "host_facts__kernel",
        "host_facts__extra",
        "host_facts__sysctl",
    )
    for other in rows.order_by("-started_at", "-id")[: MAX_POOLED_RUNS * len(runs)]:
        for run in runs:
            mine_runs = pooled[run.id]
            if not _same_set(run, other, same_hardware) or len(mine_runs) >= MAX_POOLED_RUNS:
                continue
            differs = held_differences(run, other)
            if not differs or include_unlike:
                mine_runs.append(other)
            if differs and left_out is not None:
                left_out.setdefault(run.id, []).append((other, differs))
    return pooled


class PooledResult(NamedTuple):
    """A result of a set as its aggregates and flags read it, and its run's mark: a tuple, not
    a model instance with its run's (a comparison reads hundreds to thousands of them)."""

    run_id: int
    clients: int
    threads: int | None
    tps: float | None
    latency_avg_ms: float | None
    aborted: bool
    client_bound: bool | None
    unsteady: str
    unsteady_explained: bool


# PooledResult's columns in its order, the run's mark read through the join.
POOLED_RESULT_COLUMNS = (*PooledResult._fields[:-1], "run__unsteady_explained")


def _same_set(run: Run, other: Run, same_hardware: bool) -> bool:
    if (other.build_id, other.comparability_key) != (run.build_id, run.comparability_key):
        return False
    return same_hardware or other.host_id == run.host_id


def pooled_levels(
    runs: list[Run],
    pooled: dict[int, list[Run]],
    *,
    left_out: dict[int, list[tuple[Run, list[str]]]] | None = None,
    client_bound: dict[int, set[int]] | None = None,
    unsteady: dict[int, set[int]] | None = None,
    include_unlike: bool = False,
) -> dict[int, dict[int, LevelAggregate]]:
    """For each run, its per-level aggregates over the repeats of its whole set (runs_pooled;
    results.selectors.level_aggregate_of), so the table, the charts and the change % read the
    runs the verdicts read. A member whose pgbench threads at a level differ from the run's at
    that level first leaves the set (`pooled` is changed in place, the member recorded in
    `left_out` as runs_pooled does). `client_bound` gets, for each run, the levels at which a
    valid repeat of its set was flagged client-bound, and `unsteady` those at which one moved
    inside its run (a trend or a level shift) and its run's mark does not say it is explained.
    One query, whatever the sets hold."""
    if not runs:
        return {}
    members = {member.id for run in runs for member in pooled.get(run.id) or [run]}
    rows = Result.objects.filter(run__in=members).values_list(*POOLED_RESULT_COLUMNS)
    by_run: dict[int, list[PooledResult]] = {}
    for row in map(PooledResult._make, rows):
        by_run.setdefault(row.run_id, []).append(row)
    sets = {
        run.id: _same_threads(
            run, pooled.get(run.id) or [run], by_run, left_out, include_unlike=include_unlike
        )
        for run in runs
    }
    if pooled:
        pooled.update(sets)
    levels: dict[int, dict[int, LevelAggregate]] = {}
    for run in runs:
        by_level: dict[int, list[PooledResult]] = {}
        for member in sets[run.id]:
            for row in by_run.get(member.id, []):
                by_level.setdefault(row.clients, []).append(row)
        levels[run.id] = {
            clients: level_aggregate_of(run=run, clients=clients, results=rows)
            for clients, rows in sorted(by_level.items())
        }
        if client_bound is not None:
            client_bound[run.id] = {
                clients
                for clients, rows in by_level.items()
                if any(r.client_bound for r in rows if not r.aborted)
            }
        if unsteady is not None:
            unsteady[run.id] = {
                clients
                for clients, rows in by_level.items()
                if any(r.unsteady and not r.unsteady_explained for r in rows if not r.aborted)
            }
    return levels


def _same_threads(
    run: Run,
    members: list[Run],
    by_run: dict[int, list[PooledResult]],
    left_out: dict[int, list[tuple[Run, list[str]]]] | None,
    *,
    include_unlike: bool = False,
) -> list[Run]:
    """`members` without those whose pgbench threads at a level differ from `run`'s there
    (recorded in `left_out`; kept all the same with `include_unlike`)."""
    mine = {r.clients: r.threads for r in by_run.get(run.id, []) if r.threads is not None}
    kept = []
    for member in members:
        lines = (
            threads_difference(r.clients, mine.get(r.clients), r.threads)
            for r in by_run.get(member.id, [])
        )
        differs = sorted({line for line in lines if line})
        if not differs or member.id == run.id or include_unlike:
            kept.append(member)
        if differs and member.id != run.id and left_out is not None:
            left_out.setdefault(run.id, []).append((member, differs))
    return kept
