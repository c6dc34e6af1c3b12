"""Reads for runs and results. Every list is bounded and fetches its relations up front."""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from django.core.cache import cache
from django.db import connection
from django.db.models import Prefetch, QuerySet

from benchhub.hosts.models import host_name_key
from benchhub.results.aggregates import summarize
from benchhub.results.hooks import runs_tagged
from benchhub.results.models import LevelAggregate, Result, ResultEvidence, Run

RUN_RELATIONS = ("host", "host_facts", "build", "workload", "config")


def run_list(*, filters: dict[str, Any]) -> QuerySet[Run]:
    """Runs matching the filters (host, version, workload, started_after/before, status, and
    `tag`: review tags the run carries every one of), with their relations; the caller
    paginates."""
    runs = Run.objects.select_related(*RUN_RELATIONS).defer(
        "settings", "setting_sources", "init_output"
    )
    if "host" in filters:
        runs = runs.filter(host__name_key=host_name_key(filters["host"]))
    if "version" in filters:
        runs = runs.filter(build__version=filters["version"])
    if "workload" in filters:
        runs = runs.filter(workload__name=filters["workload"])
    if "started_after" in filters:
        runs = runs.filter(started_at__gte=filters["started_after"])
    if "started_before" in filters:
        runs = runs.filter(started_at__lt=filters["started_before"])
    if "status" in filters:
        runs = runs.filter(status=filters["status"])
    return runs_tagged(runs, tags=filters.get("tag") or [])


def run_get(*, run_uuid: Any) -> Run | None:
    return (
        Run.objects.select_related(*RUN_RELATIONS, "build__recipe")
        .prefetch_related(
            Prefetch("aggregates", queryset=LevelAggregate.objects.order_by("clients"))
        )
        .filter(uuid=run_uuid)
        .first()
    )


def result_list(
    *,
    run: Run,
    with_progress: bool,
    with_evidence: bool = False,
    with_output: bool = False,
    with_telemetry: bool = False,
) -> QuerySet[Result]:
    """The run's results by level and repeat; `with_progress` joins every progress sample
    (with the OS telemetry and the raw output), `with_output` the raw output alone,
    `with_telemetry` the OS telemetry. Each is a row of its own table, joined in the same
    query."""
    results = Result.objects.filter(run=run).order_by("clients", "repeat")
    if with_evidence:
        results = results.select_related("evidence")
    if with_progress:
        return results.select_related("progress_series", "os_telemetry", "output")
    if with_output:
        results = results.select_related("output")
    return results.select_related("os_telemetry") if with_telemetry else results


_PROGRESS_COLUMNS = ("t", "tps", "latency_ms", "stddev_ms", "failed", "skipped", "lag_ms")


def sample_lengths(*, result_ids: list[int]) -> dict[int, tuple[int, int]]:
    """(progress samples, OS telemetry samples) each result holds (results with neither are
    absent), read in one query without fetching the samples themselves."""
    with connection.cursor() as cursor:
        # Each table searched once for all the ids (an index scan per partition), not once per
        # id as a join from the ids would.
        cursor.execute(
            "SELECT result_id, sum(progress)::int, sum(telemetry)::int FROM ("
            " SELECT result_id, cardinality(t) AS progress, 0 AS telemetry"
            " FROM results_progressseries WHERE result_id = ANY(%s)"
            " UNION ALL SELECT result_id, 0, jsonb_array_length(samples)"
            " FROM results_resulttelemetry WHERE result_id = ANY(%s)"
            ") AS lengths GROUP BY result_id",
            [result_ids, result_ids],
        )
        rows = cursor.fetchall()
    return {result_id: (progress, telemetry) for result_id, progress, telemetry in rows}


def progress_window(*, result_id: int, start: int, stop: int) -> list[dict[str, Any]]:
    """The result's progress samples numbered `start` .. `stop` - 1 (from 0, in time order),
    sliced in the database: a page of a long series costs its own size, not the series'."""
    slices = ", ".join(f"{column}[%s:%s]" for column in _PROGRESS_COLUMNS)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {slices} FROM results_progressseries WHERE result_id = %s",  # noqa: S608
            [*[start + 1, stop] * len(_PROGRESS_COLUMNS), result_id],
        )
        row = cursor.fetchone()
    if row is None:
        return []
    return [dict(zip(_PROGRESS_COLUMNS, values, strict=True)) for values in zip(*row, strict=True)]


def telemetry_window(*, result_id: int, start: int, stop: int) -> list[dict[str, Any]]:
    """The result's OS samples numbered `start` .. `stop` - 1 (from 0, in the order sent),
    sliced in the database as progress_window slices the progress."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT jsonb_agg(s.sample ORDER BY s.i) FROM results_resulttelemetry m,"
            " jsonb_array_elements(m.samples) WITH ORDINALITY AS s(sample, i)"
            " WHERE m.result_id = %s AND s.i > %s AND s.i <= %s",
            [result_id, start, stop],
        )
        (samples,) = cursor.fetchone()
    # Django's connection hands jsonb over as its text, for JSONField to parse.
    return json.loads(samples) if samples else []


# Points of one line of a chart: more than a page's width in pixels adds nothing to see.
MAX_CHART_POINTS = 2000


@dataclass(frozen=True)
class ProgressPoints:
    """One result's progress for a chart: seconds, tps and latency in ms, in time order."""

    t: list[float]
    tps: list[float | None]
    latency_ms: list[float | None]


# The series' lengths are taken once, in a materialised step: computed beside the unnested
# samples, `cardinality(t)` detoasted the whole array again for every sample of it, which made
# a 100,000-sample series take minutes.
_PROGRESS_POINTS_SQL = """
WITH series AS MATERIALIZED (
    SELECT result_id, t, tps, latency_ms, cardinality(t) AS n
    FROM results_progressseries
    WHERE result_id = ANY(%s)
), numbered AS (
    SELECT s.result_id, u.t, u.tps, u.latency_ms, u.i - 1 AS i, s.n
    FROM series s,
         unnest(s.t, s.tps, s.latency_ms) WITH ORDINALITY AS u(t, tps, latency_ms, i)
)
SELECT result_id, avg(t) AS t, avg(tps), avg(latency_ms)
FROM numbered
GROUP BY result_id, floor(i * %s / n)
ORDER BY result_id, t
"""


# A result's series never changes once uploaded, so its chart points are kept in the cache:
# the page of a large run then reads a few thousand numbers instead of averaging 100,000 samples
# on every view. Retention bumps the generation (progress_points_forget), and the points of
# series it dropped are no longer found.
POINTS_CACHE_S = 24 * 3600
_POINTS_GENERATION = "progress-points-generation"


def progress_points(
    *, result_ids: list[int], run_uuid: Any = None, max_points: int = MAX_CHART_POINTS
) -> dict[int, ProgressPoints]:
    """Each result's progress samples for a chart, in one query: every sample when it has at
    most `max_points`, else `max_points` runs of consecutive samples, each averaged (time,
    tps, latency; a NULL is left out of its average). Results without samples are absent.
    With the results' `run_uuid` (which names the series for good, where ids of a recreated
    database repeat), the points are cached."""
    generation = cache.get(_POINTS_GENERATION, 0) if run_uuid is not None else None
    keys = {
        rid: f"progress-points:{generation}:{run_uuid}:{max_points}:{rid}" for rid in result_ids
    }
    cached = cache.get_many(list(keys.values())) if run_uuid is not None else {}
    points: dict[int, ProgressPoints] = {
        rid: ProgressPoints(*cached[key]) for rid, key in keys.items() if key in cached
    }
    missing = [rid for rid in result_ids if keys[rid] not in cached]
    if not missing:
        return points
    read: dict[int, ProgressPoints] = {}
    with connection.cursor() as cursor:
        cursor.execute(_PROGRESS_POINTS_SQL, [missing, max_points])
        for result_id, t, tps, latency in cursor.fetchall():
            line = read.setdefault(result_id, ProgressPoints([], [], []))
            line.t.append(t)
            line.tps.append(tps)
            line.latency_ms.append(latency)
    if run_uuid is None:
        return read
    cache.set_many(
        {keys[rid]: (line.t, line.tps, line.latency_ms) for rid, line in read.items()},
        timeout=POINTS_CACHE_S,
    )
    return {**points, **read}


def progress_points_forget() -> None:
    """Every cached chart point is stale (retention dropped series)."""
    cache.set(_POINTS_GENERATION, cache.get(_POINTS_GENERATION, 0) + 1, timeout=None)


def evidence_by_result(*, run: Run) -> dict[int, ResultEvidence]:
    """The evidence of the run's results, by result id, in one query."""
    return {row.result_id: row for row in ResultEvidence.objects.filter(result__run=run)}


MAX_DIMENSIONS = 5000


@dataclass(frozen=True)
class RunDimensions:
    """What has been measured, for pickers: names in order (versions in version order), and
    `measured`, the (workload, host, version) triples that have at least one run."""

    workloads: list[str]
    hosts: list[str]
    versions: list[str]
    measured: list[tuple[str, str, str]]


def run_dimensions() -> RunDimensions:
    rows = (
        Run.objects.order_by("build__sort_key", "build__version", "workload__name", "host__name")
        .values_list("workload__name", "host__name", "build__version")
        .distinct()[:MAX_DIMENSIONS]
    )
    measured = list(dict.fromkeys((w, h, v) for w, h, v in rows))
    return RunDimensions(
        workloads=sorted({w for w, _, _ in measured}),
        hosts=sorted({h for _, h, _ in measured}),
        versions=list(dict.fromkeys(v for _, _, v in measured)),
        measured=measured,
    )


class LevelFigures(Protocol):
    """What level_aggregate_of reads of a result: a Result, or a row read as a tuple."""

    @property
    def tps(self) -> float | None: ...

    @property
    def latency_avg_ms(self) -> float | None: ...

    @property
    def aborted(self) -> bool: ...


def level_aggregate_of(
    *, run: Run, clients: int, results: Sequence[LevelFigures]
) -> LevelAggregate:
    """The (unsaved) LevelAggregate of `results` at one client level, filed under `run`:
    aborted results counted and left out of every statistic. `results` need tps,
    latency_avg_ms and aborted; they may come from several runs (a comparison's pooled set)."""
    valid = [r for r in results if not r.aborted]
    tps = summarize([r.tps for r in valid if r.tps is not None])
    latency = summarize([r.latency_avg_ms for r in valid if r.latency_avg_ms is not None])
    return LevelAggregate(
        run=run,
        clients=clients,
        comparability_key=run.comparability_key,
        host_id=run.host_id,
        build_id=run.build_id,
        workload_id=run.workload_id,
        samples=len(valid),
        aborted=len(results) - len(valid),
        tps_median=tps.median,
        tps_mean=tps.mean,
        tps_stddev=tps.stddev,
        tps_min=tps.minimum,
        tps_max=tps.maximum,
        latency_median_ms=latency.median,
        latency_mean_ms=latency.mean,
        latency_stddev_ms=latency.stddev,
        latency_min_ms=latency.minimum,
        latency_max_ms=latency.maximum,
    )
