"""Connections against tps (E2), the limits the agent raised, and the progress charts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from benchhub.compare.presentations.common import (
    by_label,
    level_tps,
    median,
    version_labels,
)
from benchhub.compare.selectors.comparisons import Comparison
from benchhub.compare.selectors.presentations import ProgressRead, StreamValues
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


def connections_table(comparisons: list[Comparison], values: StreamValues) -> ConnectionsTable:
    """Per workload and measured client level: the idle connections the background streams
    held open when the measurement began (`established`, summed over the background streams
    of a repeat, median over valid repeats; 0 for a workload without background streams), and
    each version's median tps with its change against the baseline. Also what the agent
    raised for each run (Run.client_limits) and the init timings. `values` is
    selectors.stream_values of the compared runs."""
    labels = version_labels(comparisons)
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


def progress_lines(comparisons: list[Comparison], read: ProgressRead) -> list[Progress]:
    """Per workload, the `-P` progress (tps per interval) of each version at the level
    selectors.progress_read chose, in the repeat it chose (`read`)."""
    charts = []
    for comparison, clients in zip(comparisons, read.levels, strict=True):
        if clients is None:
            continue
        lines = []
        for s in comparison.series:
            result = read.repeats.get(s.run.id)
            if result is None:
                continue
            points = read.samples.get(result["id"], [])
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
                clients=clients,
                interval_s=workload.progress_s,
                lines=lines,
            )
        )
    return charts
