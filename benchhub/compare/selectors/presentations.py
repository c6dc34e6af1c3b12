"""The reads of an experiment's presentation (compare.presentations builds its tables from
them): which presentation the compared workloads use, the figures its table needs beyond the
comparison's aggregates, and a connections presentation's progress samples.

presentation_read makes one query (none for a sweep), progress_read two, whatever the number of
workloads, versions or levels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import Max, Min, Q

from benchhub.compare.selectors.comparisons import Comparison
from benchhub.results.models import ProgressSeries, Result, ResultTelemetry, StreamResult
from benchhub.workloads.models import Workload

MAX_STREAM_ROWS = 20000
MAX_PROGRESS_POINTS = 50000

# (run id, clients) -> stream name -> the stream's figures in each valid repeat.
StreamValues = dict[tuple[int, int], dict[str, list[Mapping[str, Any]]]]
# (run id, clients) -> the fewest and the most threads pgbench ran the level's valid results with.
LevelThreads = dict[tuple[int, int], set[int]]
# (run id, clients) -> (samples, mean iowait %, mean device use %, mean bytes written per s).
TelemetryMeans = dict[tuple[int, int], tuple]


@dataclass
class PresentationRead:
    """What the tables of `kind` are built from besides the comparisons: `threads` for an
    improvement table, `streams` for a streams or connections table, `telemetry` for an
    evidence table; the others stay empty."""

    kind: str
    threads: LevelThreads = field(default_factory=dict)
    streams: StreamValues = field(default_factory=dict)
    telemetry: TelemetryMeans = field(default_factory=dict)


@dataclass
class ProgressRead:
    """A connections presentation's progress: `levels` the level charted per comparison (in the
    comparisons' order, None for one without a level); `repeats` run id -> the charted valid
    result ({"id", "run_id", "repeat", "tps"}); `samples` result id -> its (t, tps) points."""

    levels: list[int | None]
    repeats: dict[int, Mapping[str, Any]]
    samples: dict[int, list[tuple[float, float | None]]]


def presentation_of(comparisons: list[Comparison]) -> str:
    """The presentation of the compared workloads: the baseline workload's."""
    for comparison in comparisons:
        if comparison.series:
            return comparison.series[0].run.workload.presentation
    return Workload.Presentation.SWEEP


def run_ids(comparisons: list[Comparison]) -> list[int]:
    return [s.run.id for c in comparisons for s in c.series]


def presentation_read(comparisons: list[Comparison]) -> PresentationRead:
    """What the comparisons' presentation needs read (see PresentationRead). One query, none
    for a sweep or without a run."""
    kind = presentation_of(comparisons)
    read = PresentationRead(kind=kind)
    ids = run_ids(comparisons)
    if not ids:
        return read
    if kind == Workload.Presentation.IMPROVEMENT:
        read.threads = level_threads(ids)
    elif kind in (Workload.Presentation.STREAMS, Workload.Presentation.CONNECTIONS):
        read.streams = stream_values(ids)
    elif kind == Workload.Presentation.EVIDENCE:
        read.telemetry = telemetry_means(ids)
    return read


def level_threads(run_ids: list[int]) -> LevelThreads:
    """Threads as pgbench ran each level (Result threads of the valid results). One query."""
    rows = (
        Result.objects.filter(run__in=run_ids, aborted=False, threads__isnull=False)
        .values("run_id", "clients")
        .annotate(low=Min("threads"), high=Max("threads"))
        .order_by()
    )
    return {(r["run_id"], r["clients"]): {r["low"], r["high"]} for r in rows}


def stream_values(run_ids: list[int]) -> StreamValues:
    """Each level's streams in each valid repeat. A stream counts when neither it nor its
    level's result aborted. One query."""
    rows = (
        StreamResult.objects.filter(result__run__in=run_ids, result__aborted=False, aborted=False)
        .values(
            "result_id",
            "result__run_id",
            "result__clients",
            "name",
            "role",
            "tps",
            "latency_avg_ms",
            "rows_per_transaction",
            "rows_per_s",
            "established",
        )
        .order_by("result__run_id", "result__clients", "result__repeat", "id")[:MAX_STREAM_ROWS]
    )
    found: StreamValues = {}
    for row in rows:
        level = found.setdefault((row["result__run_id"], row["result__clients"]), {})
        level.setdefault(row["name"], []).append(row)
    return found


# Means over the JSON telemetry samples (ResultTelemetry, a row per result), computed by
# PostgreSQL so the samples never leave it.
TELEMETRY_MEANS = f"""
SELECT r.run_id, r.clients, count(s.sample),
       avg((s.sample ->> 'cpu_iowait_pct')::float8),
       avg((s.sample ->> 'disk_util_pct')::float8),
       avg((s.sample ->> 'disk_write_bytes_per_s')::float8)
FROM {Result._meta.db_table} r
JOIN {ResultTelemetry._meta.db_table} m ON m.result_id = r.id
CROSS JOIN LATERAL jsonb_array_elements(m.samples) AS s(sample)
WHERE r.run_id = ANY(%s) AND NOT r.aborted AND jsonb_typeof(m.samples) = 'array'
GROUP BY r.run_id, r.clients
"""  # noqa: S608 - the table names are ours; the run ids are a parameter


def telemetry_means(run_ids: list[int]) -> TelemetryMeans:
    """The OS samples' means per level over every sample of the valid repeats. One query."""
    with connection.cursor() as cursor:
        cursor.execute(TELEMETRY_MEANS, [run_ids])
        return {(row[0], row[1]): row[2:] for row in cursor.fetchall()}


def progress_read(comparisons: list[Comparison], *, level: int | None = None) -> ProgressRead:
    """Per comparison the `-P` progress of each version at one level: the asked `level` when the
    workload has it, else its largest. The repeat charted is the valid repeat whose tps is the
    median (the lower middle one for an even number of repeats); at most MAX_PROGRESS_POINTS
    points in all. Two queries."""
    levels = [
        (level if level in c.clients else max(c.clients)) if c.clients else None
        for c in comparisons
    ]
    wanted = Q(pk__in=[])
    for comparison, chosen in zip(comparisons, levels, strict=True):
        if chosen is not None:
            wanted |= Q(run__in=[s.run.id for s in comparison.series], clients=chosen)
    results: dict[int, list[Mapping[str, Any]]] = {}
    for row in Result.objects.filter(wanted, aborted=False).values("id", "run_id", "repeat", "tps"):
        results.setdefault(row["run_id"], []).append(row)
    repeats = {run_id: _median_repeat(rows) for run_id, rows in results.items()}
    samples: dict[int, list[tuple[float, float | None]]] = {}
    budget = MAX_PROGRESS_POINTS
    for result_id, t, tps in (
        ProgressSeries.objects.filter(result__in=[p["id"] for p in repeats.values()])
        .values_list("result_id", "t", "tps")
        .order_by("result_id")
    ):
        samples[result_id] = list(zip(t, tps, strict=True))[: max(budget, 0)]
        budget -= len(t)
    return ProgressRead(levels=levels, repeats=repeats, samples=samples)


def _median_repeat(rows: list[Mapping[str, Any]]) -> Mapping[str, Any]:
    ordered = sorted(rows, key=lambda r: (r["tps"], r["repeat"]))
    return ordered[(len(ordered) - 1) // 2]
