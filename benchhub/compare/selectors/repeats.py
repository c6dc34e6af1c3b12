"""What a comparison's verdicts are made of: the pooled repeats of each version and the host's
history under the baseline's comparability key (compare.assessment computes the verdicts)."""

from __future__ import annotations

from collections.abc import Hashable

from django.db import connection

from benchhub.compare.selectors.comparisons import Comparison
from benchhub.jobs.models import Job
from benchhub.results.models import Result
from benchhub.stats.noise import Spread
from benchhub.stats.repeats import Repeat, RunMean

REPEAT_FIELDS = (
    "run_id",
    "clients",
    "steady_tps",
    "steady_tps_se",
    "steady_latency_ms",
    "steady_latency_se_ms",
    "steady_seconds",
    "steady_block",
)
# What tells which repeats were measured side by side: a job runs its versions in turn at each
# level and repeat when its order is interleaved, on its one host.
PAIR_FIELDS = ("repeat", "run__job_id", "run__job_attempt", "run__host_id", "run__job__order")
MAX_HISTORY_RESULTS = 5000


def comparison_repeats(comparison: Comparison) -> dict[int, dict[int, list[Repeat]]]:
    """Each series' repeats by client level, from the stored steady-state means of its pooled
    runs' valid results (one query): series run id -> clients -> repeats, each with the pair it
    was measured in (`pair_key`). What the verdicts (compare.assessment) are made of."""
    owner: dict[int, int] = {}
    for series in comparison.series:
        for run in series.pooled or [series.run]:
            owner.setdefault(run.id, series.run.id)
    found: dict[int, dict[int, list[Repeat]]] = {s.run.id: {} for s in comparison.series}
    rows = (
        Result.objects.filter(run__in=list(owner), aborted=False, steady_tps__gt=0)
        .order_by("run_id", "clients", "repeat")
        .values_list(*REPEAT_FIELDS, *PAIR_FIELDS)
    )
    measured = len(REPEAT_FIELDS) - 2
    for run_id, clients, *values in rows:
        pair = pair_key(clients, *values[measured:])
        repeat = _repeat(run_id, *values[:measured], pair=pair)
        found[owner[run_id]].setdefault(clients, []).append(repeat)
    return found


def pair_key(
    clients: int,
    repeat: int,
    job_id: int | None,
    attempt: int | None,
    host_id: int,
    order: str | None,
) -> Hashable | None:
    """The moment a repeat was measured at, which the other versions of its job share when the
    job interleaved them: its job and attempt, host, level and repeat. None for a run of no job
    (imported, uploaded by hand) or of a job that ran its versions one after the other."""
    if job_id is None or order != Job.Order.INTERLEAVED:
        return None
    return (job_id, attempt, host_id, clients, repeat)


def _repeat(
    run_id: int,
    tps: float,
    tps_se: float | None,
    latency: float | None,
    latency_se: float | None,
    seconds: int,
    block: int,
    *,
    pair: Hashable | None,
) -> Repeat:
    return Repeat(
        tps=RunMean(value=tps, within_se=tps_se or 0.0, seconds=seconds, block=block),
        latency=(
            RunMean(value=latency, within_se=latency_se or 0.0, seconds=seconds, block=block)
            if latency
            else None
        ),
        run=run_id,
        pair=pair,
    )


def comparison_history_spreads(
    comparison: Comparison, *, levels: list[int]
) -> dict[int, list[Spread]]:
    """The host's history at `levels` (clients): the spread of log(steady tps) of each build
    other than the compared ones under the baseline's comparability key, over the newest
    MAX_HISTORY_RESULTS valid results (one query): clients -> one Spread per build. The noise
    the verdicts pool in (compare.assessment)."""
    base = comparison.series[0]
    compared = {s.run.build_id for s in comparison.series}
    history_spreads: dict[int, list[Spread]] = {c: [] for c in levels}
    newest = (
        Result.objects.filter(
            comparability_key=base.run.comparability_key,
            # Said of the run too (a result's key is its run's): the runs are then found by
            # their key's index, not by a scan of every run for the join.
            run__comparability_key=base.run.comparability_key,
            clients__in=levels,
            aborted=False,
            steady_tps__gt=0,
            run__invalid=False,
        )
        .exclude(run__build_id__in=compared)
        .order_by("-id")
        .values_list("clients", "run__build_id", "steady_tps")[:MAX_HISTORY_RESULTS]
    )
    # Each build's spread at each level, summed up by the database over the newest results:
    # the page reads one row per build and level, not the thousands of results behind them.
    sql, params = newest.query.sql_with_params()
    # The inner statement is the ORM's own, its values passed as parameters.
    statement = (
        "SELECT clients, build_id, count(*), var_pop(ln(steady_tps))"  # noqa: S608
        f" FROM ({sql}) AS newest (clients, build_id, steady_tps) GROUP BY 1, 2"
    )
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        for clients, _, count, variance in cursor.fetchall():
            history_spreads[clients].append(Spread(count=count, squares=variance * count))
    return history_spreads


# The host page's noise table: at most this many of the host's newest results are read, and
# the visible difference is for this many repeats a side.
