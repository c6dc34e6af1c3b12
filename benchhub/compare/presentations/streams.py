"""The streams table (E4): each stream's tps, latency and rows per second per level."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchhub.compare.presentations.common import (
    by_label,
    median,
    version_labels,
)
from benchhub.compare.selectors.comparisons import Comparison
from benchhub.compare.selectors.presentations import StreamValues
from benchhub.workloads.models import Workload


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


def _stream_cell(values: list[Mapping[str, Any]]) -> StreamCell:
    def median_of(name: str) -> float | None:
        return median([v[name] for v in values if v[name] is not None])

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
        rows_per_s=median([r for r in rows_per_s if r is not None]),
        established=median_of("established"),
        samples=len(values),
    )


def _stream_order(workload: Workload, names: set[str]) -> list[str]:
    declared = [s.get("name") for s in workload.streams if s.get("name") in names]
    return declared + sorted(names - set(declared))


def stream_table(comparisons: list[Comparison], values: StreamValues) -> StreamTable:
    """Per workload, level and stream: each version's tps, latency (ms) and rows/s (tps x rows
    per transaction, as published), medians over valid repeats; `values` is
    selectors.stream_values of the compared runs."""
    labels = version_labels(comparisons)
    rows = []
    for comparison in comparisons:
        columns = by_label(comparison, labels)
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
