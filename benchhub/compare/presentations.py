"""Each experiment's results the way its authors presented them (Workload.presentation).

Every builder takes comparisons already read (selectors.comparison_get for one workload,
experiments.experiment_get for several) and adds at most two queries, whatever the number of
workloads, versions or levels. Columns follow the versions: `labels` lists them, the first is
the baseline ("old"); a workload without a run of a version has None in that column.

Figures are medians over the valid repeats of a level: aborted results (and aborted streams)
never count, and runs marked invalid were left out by the comparison's selector.
"""

from __future__ import annotations

import statistics as stats
from dataclasses import asdict, dataclass, field
from typing import Any

from django.db import connection
from django.db.models import Max, Min, Q

from benchhub.compare.experiments import model_name
from benchhub.compare.selectors import Comparison, Series
from benchhub.compare.statistics import change_pct
from benchhub.results.models import ProgressSample, Result, StreamResult
from benchhub.workloads.models import Workload

MAX_STREAM_ROWS = 20000
MAX_PROGRESS_POINTS = 50000
EVIDENCE_PARAMS = ("key_type", "prefill_rows", "storage", "index")


def version_labels(comparisons: list[Comparison]) -> list[str]:
    """The columns: every series label in the order first seen (the baseline's first)."""
    labels: list[str] = []
    for comparison in comparisons:
        for series in comparison.series:
            if series.label not in labels:
                labels.append(series.label)
    return labels


def _by_label(comparison: Comparison, labels: list[str]) -> list[Series | None]:
    mine = {s.label: s for s in comparison.series}
    return [mine.get(label) for label in labels]


def _median(values: list[float]) -> float | None:
    return stats.median(values) if values else None


def _run_ids(comparisons: list[Comparison]) -> list[int]:
    return [s.run.id for c in comparisons for s in c.series]


# --- improvement (E5) -------------------------------------------------------------------------


@dataclass
class Improvement:
    """A version other than the baseline at one level: its median tps and change in percent."""

    tps: float | None
    improvement_pct: float | None


@dataclass
class ImprovementRow:
    model: str
    workload: str
    connections: int
    threads: str
    old: float | None
    new: list[Improvement]


@dataclass
class ImprovementTable:
    old: str
    new: list[str]
    rows: list[ImprovementRow]


def improvement_table(comparisons: list[Comparison]) -> ImprovementTable | None:
    """model | connections | threads | tps old | tps new | improvement %, one row per workload
    and client level, from the LevelAggregate medians; threads as pgbench ran them (Result
    threads of the valid results, "a / b" when versions ran the level with different threads).
    One query."""
    labels = version_labels(comparisons)
    if not labels:
        return None
    threads = _level_threads(_run_ids(comparisons))
    rows = []
    for comparison in comparisons:
        columns = _by_label(comparison, labels)
        workload = comparison.series[0].run.workload
        for clients in comparison.clients:
            medians = [_tps(s, clients) for s in columns]
            used = sorted({t for s in columns if s for t in threads.get((s.run.id, clients), ())})
            rows.append(
                ImprovementRow(
                    model=model_name(workload),
                    workload=workload.name,
                    connections=clients,
                    threads=" / ".join(map(str, used)) or "unknown",
                    old=medians[0],
                    new=[
                        Improvement(tps=m, improvement_pct=change_pct(medians[0], m))
                        for m in medians[1:]
                    ],
                )
            )
    return ImprovementTable(old=labels[0], new=labels[1:], rows=rows)


def _tps(series: Series | None, clients: int) -> float | None:
    level = series.levels.get(clients) if series else None
    return level.tps_median if level else None


def _level_threads(run_ids: list[int]) -> dict[tuple[int, int], set[int]]:
    rows = (
        Result.objects.filter(run__in=run_ids, aborted=False, threads__isnull=False)
        .values("run_id", "clients")
        .annotate(low=Min("threads"), high=Max("threads"))
        .order_by()
    )
    return {(r["run_id"], r["clients"]): {r["low"], r["high"]} for r in rows}


# --- streams (E4) -----------------------------------------------------------------------------


@dataclass
class StreamCell:
    """One stream of one version at one level: medians over the valid repeats."""

    tps: float | None
    latency_ms: float | None
    rows_per_s: float | None
    established: float | None
    samples: int


@dataclass
class StreamRow:
    workload: str
    clients: int
    stream: str
    role: str
    rows_per_transaction: int | None
    cells: list[StreamCell | None]


@dataclass
class StreamTable:
    labels: list[str]
    rows: list[StreamRow]


StreamValues = dict[tuple[int, int], dict[str, list[dict[str, Any]]]]


def _stream_values(run_ids: list[int]) -> StreamValues:
    """(run id, clients) -> stream name -> the stream's figures in each valid repeat. A stream
    counts when neither it nor its level's result aborted. One query."""
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


def _stream_cell(values: list[dict[str, Any]]) -> StreamCell:
    def median_of(name: str) -> float | None:
        return _median([v[name] for v in values if v[name] is not None])

    rows_per_s = [
        v["rows_per_s"]
        if v["rows_per_s"] is not None
        else (
            v["tps"] * v["rows_per_transaction"]
            if v["tps"] is not None and v["rows_per_transaction"]
            else None
        )
        for v in values
    ]
    return StreamCell(
        tps=median_of("tps"),
        latency_ms=median_of("latency_avg_ms"),
        rows_per_s=_median([r for r in rows_per_s if r is not None]),
        established=median_of("established"),
        samples=len(values),
    )


def _stream_order(workload: Workload, names: set[str]) -> list[str]:
    declared = [s.get("name") for s in workload.streams if s.get("name") in names]
    return declared + sorted(names - set(declared))


def stream_table(comparisons: list[Comparison]) -> StreamTable:
    """Per workload, level and stream: each version's tps, latency (ms) and rows/s (tps x rows
    per transaction, as published), medians over valid repeats. One query."""
    labels = version_labels(comparisons)
    values = _stream_values(_run_ids(comparisons))
    rows = []
    for comparison in comparisons:
        columns = _by_label(comparison, labels)
        workload = comparison.series[0].run.workload
        for clients in comparison.clients:
            levels = [values.get((s.run.id, clients), {}) if s else {} for s in columns]
            names = {name for level in levels for name in level}
            for name in _stream_order(workload, names):
                first = next(level[name][0] for level in levels if name in level)
                rows.append(
                    StreamRow(
                        workload=workload.name,
                        clients=clients,
                        stream=name,
                        role=first["role"],
                        rows_per_transaction=first["rows_per_transaction"],
                        cells=[
                            _stream_cell(level[name]) if name in level else None for level in levels
                        ],
                    )
                )
    return StreamTable(labels=labels, rows=rows)


# --- connections (E2) -------------------------------------------------------------------------


@dataclass
class ConnectionsCell:
    tps: float | None
    change_pct: float | None
    idle: int | None


@dataclass
class ConnectionsRow:
    """`idle` is the connections held idle when every version held the same number (else
    None, and each cell has its own); `connections` = idle + measured clients."""

    workload: str
    clients: int
    cells: list[ConnectionsCell | None]
    idle: int | None = None
    connections: int | None = None

    def __post_init__(self) -> None:
        held = {c.idle for c in self.cells if c is not None}
        if len(held) == 1 and None not in held:
            self.idle = held.pop()
            self.connections = self.idle + self.clients


@dataclass
class ClientLimits:
    label: str
    max_connections: int | None
    nofile_soft: int | None
    nofile_hard: int | None
    server_max_connections: str | None
    init_timings: dict[str, float]


@dataclass
class ConnectionsTable:
    labels: list[str]
    rows: list[ConnectionsRow]
    limits: list[ClientLimits] = field(default_factory=list)


def connections_table(comparisons: list[Comparison]) -> ConnectionsTable:
    """Per workload and measured client level: the idle connections the background streams
    held open when the measurement began (`established`, summed over the background streams
    of a repeat, median over valid repeats; 0 for a workload without background streams), and
    each version's median tps with its change against the baseline. Also what the agent
    raised for each run (Run.client_limits) and the init timings. One query."""
    labels = version_labels(comparisons)
    values = _stream_values(_run_ids(comparisons))
    rows = []
    for comparison in comparisons:
        columns = _by_label(comparison, labels)
        workload = comparison.series[0].run.workload
        background = any(s.get("role") == "background" for s in workload.streams)
        for clients in comparison.clients:
            base = _tps(columns[0], clients)
            cells = [
                ConnectionsCell(
                    tps=_tps(s, clients),
                    change_pct=change_pct(base, _tps(s, clients)),
                    idle=_idle(values.get((s.run.id, clients), {})) if background else 0,
                )
                if s and clients in s.levels
                else None
                for s in columns
            ]
            rows.append(ConnectionsRow(workload=workload.name, clients=clients, cells=cells))
    return ConnectionsTable(labels=labels, rows=rows, limits=_limits(comparisons))


def _idle(streams: dict[str, list[dict[str, Any]]]) -> int | None:
    """Connections the level's background streams held: per repeat the sum over background
    streams, then the median over repeats; None when the agent reported none."""
    per_result: dict[int, int] = {}
    for found in streams.values():
        for row in found:
            if row["role"] == "background" and row["established"] is not None:
                per_result[row["result_id"]] = (
                    per_result.get(row["result_id"], 0) + row["established"]
                )
    median = _median(list(per_result.values()))
    return None if median is None else round(median)


def _limits(comparisons: list[Comparison]) -> list[ClientLimits]:
    seen: dict[int, ClientLimits] = {}
    for comparison in comparisons:
        for s in comparison.series:
            limits = s.run.client_limits or {}
            seen.setdefault(
                s.run.id,
                ClientLimits(
                    label=s.label
                    if len(comparisons) == 1
                    else f"{s.run.workload.name} · {s.label}",
                    max_connections=limits.get("max_connections"),
                    nofile_soft=limits.get("nofile_soft"),
                    nofile_hard=limits.get("nofile_hard"),
                    server_max_connections=s.run.config.settings.get("max_connections"),
                    init_timings=s.run.init_timings or {},
                ),
            )
    return list(seen.values())


# --- progress (E2 chart) ----------------------------------------------------------------------


@dataclass
class ProgressLine:
    label: str
    repeat: int
    t: list[float]
    tps: list[float | None]


@dataclass
class Progress:
    workload: str
    clients: int
    interval_s: int
    lines: list[ProgressLine]


def progress_lines(comparisons: list[Comparison], *, level: int | None = None) -> list[Progress]:
    """Per workload, the `-P` progress (tps per interval) of each version at one level: the
    asked `level` when the workload has it, else its largest. The repeat shown is the valid
    repeat whose tps is the median (the lower middle one for an even number of repeats).
    Two queries."""
    chosen = {
        id(c): (level if level in c.clients else max(c.clients)) for c in comparisons if c.clients
    }
    wanted = Q(pk__in=[])
    for comparison in comparisons:
        if id(comparison) in chosen:
            wanted |= Q(
                run__in=[s.run.id for s in comparison.series], clients=chosen[id(comparison)]
            )
    results: dict[int, list[dict[str, Any]]] = {}
    for row in Result.objects.filter(wanted, aborted=False).values("id", "run_id", "repeat", "tps"):
        results.setdefault(row["run_id"], []).append(row)
    picked = {run_id: _median_repeat(rows) for run_id, rows in results.items()}
    samples: dict[int, list[tuple[float, float | None]]] = {}
    for row in (
        ProgressSample.objects.filter(result__in=[p["id"] for p in picked.values()])
        .values_list("result_id", "t", "tps")
        .order_by("result_id", "t")[:MAX_PROGRESS_POINTS]
    ):
        samples.setdefault(row[0], []).append((row[1], row[2]))
    charts = []
    for comparison in comparisons:
        if id(comparison) not in chosen:
            continue
        lines = []
        for s in comparison.series:
            result = picked.get(s.run.id)
            if result is None:
                continue
            points = samples.get(result["id"], [])
            lines.append(
                ProgressLine(
                    label=s.label,
                    repeat=result["repeat"],
                    t=[t for t, _ in points],
                    tps=[tps for _, tps in points],
                )
            )
        workload = comparison.series[0].run.workload
        charts.append(
            Progress(
                workload=workload.name,
                clients=chosen[id(comparison)],
                interval_s=workload.progress_s,
                lines=lines,
            )
        )
    return charts


def _median_repeat(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ordered = sorted(rows, key=lambda r: (r["tps"], r["repeat"]))
    return ordered[(len(ordered) - 1) // 2]


# --- evidence (E3) ----------------------------------------------------------------------------


@dataclass
class EvidenceCell:
    """One version of one variant at one level: median tps over valid repeats, and the OS
    samples' means over the measurement (every per-second sample of every valid repeat)."""

    tps: float | None
    iowait_pct: float | None
    disk_util_pct: float | None
    disk_write_mb_s: float | None
    samples: int


@dataclass
class EvidenceRow:
    workload: str
    params: list[str]
    clients: int
    cells: list[EvidenceCell | None]


@dataclass
class EvidenceTable:
    labels: list[str]
    params: list[str]
    rows: list[EvidenceRow]


# Means over the JSON telemetry samples, computed by PostgreSQL so the samples never leave it.
TELEMETRY_MEANS = f"""
SELECT r.run_id, r.clients, count(s.sample),
       avg((s.sample ->> 'cpu_iowait_pct')::float8),
       avg((s.sample ->> 'disk_util_pct')::float8),
       avg((s.sample ->> 'disk_write_bytes_per_s')::float8)
FROM {Result._meta.db_table} r
CROSS JOIN LATERAL jsonb_array_elements(r.telemetry) AS s(sample)
WHERE r.run_id = ANY(%s) AND NOT r.aborted AND jsonb_typeof(r.telemetry) = 'array'
GROUP BY r.run_id, r.clients
"""  # noqa: S608 - the table name is ours; the run ids are a parameter


def _telemetry_means(run_ids: list[int]) -> dict[tuple[int, int], tuple]:
    if not run_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(TELEMETRY_MEANS, [run_ids])
        return {(row[0], row[1]): row[2:] for row in cursor.fetchall()}


def evidence_params(comparisons: list[Comparison]) -> list[str]:
    """The params shown as columns: the E3 ones first, then any other, in name order."""
    names = {name for c in comparisons for name in c.series[0].run.workload.params}
    return [n for n in EVIDENCE_PARAMS if n in names] + sorted(names - set(EVIDENCE_PARAMS))


def evidence_table(comparisons: list[Comparison]) -> EvidenceTable:
    """One row per variant (workload params) and level; per version its median tps, and the
    mean CPU iowait (%), device utilisation (%) and device write rate (MB/s = 10^6 bytes/s)
    over the measurement, from Result.telemetry. One query."""
    labels = version_labels(comparisons)
    params = evidence_params(comparisons)
    means = _telemetry_means(_run_ids(comparisons))
    rows = []
    for comparison in comparisons:
        workload = comparison.series[0].run.workload
        columns = _by_label(comparison, labels)
        for clients in comparison.clients:
            rows.append(
                EvidenceRow(
                    workload=workload.name,
                    params=[_param_text(workload.params.get(p)) for p in params],
                    clients=clients,
                    cells=[_evidence_cell(s, clients, means) for s in columns],
                )
            )
    return EvidenceTable(labels=labels, params=params, rows=rows)


def _evidence_cell(series: Series | None, clients: int, means: dict) -> EvidenceCell | None:
    if series is None or clients not in series.levels:
        return None
    count, iowait, util, write = means.get((series.run.id, clients), (0, None, None, None))
    return EvidenceCell(
        tps=_tps(series, clients),
        iowait_pct=iowait,
        disk_util_pct=util,
        disk_write_mb_s=None if write is None else write / 1e6,
        samples=count,
    )


def _param_text(value: Any) -> str:
    return "" if value is None else str(value)


# --- what a workload's presentation shows -----------------------------------------------------


def presentation_of(comparisons: list[Comparison]) -> str:
    """The presentation of the compared workloads: the baseline workload's."""
    for comparison in comparisons:
        if comparison.series:
            return comparison.series[0].run.workload.presentation
    return Workload.Presentation.SWEEP


def presentation_data(comparisons: list[Comparison]) -> dict[str, Any]:
    """presentation_tables as JSON-ready data (the compare API's "presentation" key)."""
    return {
        name: value if isinstance(value, str) else asdict(value)
        for name, value in presentation_tables(comparisons).items()
    }


def presentation_tables(comparisons: list[Comparison]) -> dict[str, Any]:
    """The tables of the comparisons' presentation (none for a sweep): {"presentation": ...,
    "improvement" | "streams" | "connections" | "evidence": table}."""
    comparisons = [c for c in comparisons if c.series]
    kind = presentation_of(comparisons)
    builders = {
        Workload.Presentation.IMPROVEMENT: ("improvement", improvement_table),
        Workload.Presentation.STREAMS: ("streams", stream_table),
        Workload.Presentation.CONNECTIONS: ("connections", connections_table),
        Workload.Presentation.EVIDENCE: ("evidence", evidence_table),
    }
    tables: dict[str, Any] = {"presentation": kind}
    if kind in builders and comparisons:
        name, build = builders[kind]
        tables[name] = build(comparisons)
    return tables
