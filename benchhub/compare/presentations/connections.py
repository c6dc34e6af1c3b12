"""Connections against tps (E2), the limits the agent raised, and the progress charts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q

from benchhub.compare.presentations.common import (
    MAX_PROGRESS_POINTS,
    by_label,
    level_tps,
    median,
    run_ids,
    version_labels,
)
from benchhub.compare.presentations.streams import stream_values
from benchhub.compare.selectors import Comparison
from benchhub.results.models import ProgressSeries, Result
from benchhub.stats.figures import change_pct


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
        idle = held.pop() if len(held) == 1 else None
        if idle is not None:
            self.idle = idle
            self.connections = idle + self.clients


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
    values = stream_values(run_ids(comparisons))
    rows = []
    for comparison in comparisons:
        columns = by_label(comparison, labels)
        workload = comparison.series[0].run.workload
        background = any(s.get("role") == "background" for s in workload.streams)
        for clients in comparison.clients:
            base = level_tps(columns[0], clients)
            cells = [
                ConnectionsCell(
                    tps=level_tps(s, clients),
                    change_pct=change_pct(base, level_tps(s, clients)),
                    idle=_idle(values.get((s.run.id, clients), {})) if background else 0,
                )
                if s and clients in s.levels
                else None
                for s in columns
            ]
            rows.append(ConnectionsRow(workload=workload.name, clients=clients, cells=cells))
    return ConnectionsTable(labels=labels, rows=rows, limits=_limits(comparisons))


def _idle(streams: dict[str, list[Mapping[str, Any]]]) -> int | None:
    """Connections the level's background streams held: per repeat the sum over background
    streams, then the median over repeats; None when the agent reported none."""
    per_result: dict[int, int] = {}
    for found in streams.values():
        for row in found:
            if row["role"] == "background" and row["established"] is not None:
                per_result[row["result_id"]] = (
                    per_result.get(row["result_id"], 0) + row["established"]
                )
    held = median(list(per_result.values()))
    return None if held is None else round(held)


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
    results: dict[int, list[Mapping[str, Any]]] = {}
    for row in Result.objects.filter(wanted, aborted=False).values("id", "run_id", "repeat", "tps"):
        results.setdefault(row["run_id"], []).append(row)
    picked = {run_id: _median_repeat(rows) for run_id, rows in results.items()}
    samples: dict[int, list[tuple[float, float | None]]] = {}
    budget = MAX_PROGRESS_POINTS
    for result_id, t, tps in (
        ProgressSeries.objects.filter(result__in=[p["id"] for p in picked.values()])
        .values_list("result_id", "t", "tps")
        .order_by("result_id")
    ):
        samples[result_id] = list(zip(t, tps, strict=True))[: max(budget, 0)]
        budget -= len(t)
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


def _median_repeat(rows: list[Mapping[str, Any]]) -> Mapping[str, Any]:
    ordered = sorted(rows, key=lambda r: (r["tps"], r["repeat"]))
    return ordered[(len(ordered) - 1) // 2]
