"""tps with the OS evidence beside it (E3): iowait, device use and writes per variant."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchhub.compare.presentations.common import (
    EVIDENCE_PARAMS,
    by_label,
    level_tps,
    version_labels,
)
from benchhub.compare.selectors.comparisons import Comparison
from benchhub.compare.selectors.presentations import TelemetryMeans
from benchhub.compare.types import Series


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


def evidence_params(comparisons: list[Comparison]) -> list[str]:
    """The params shown as columns: the E3 ones first, then any other, in name order."""
    names = {name for c in comparisons for name in c.series[0].run.workload.params}
    return [n for n in EVIDENCE_PARAMS if n in names] + sorted(names - set(EVIDENCE_PARAMS))


def evidence_table(comparisons: list[Comparison], means: TelemetryMeans) -> EvidenceTable:
    """One row per variant (workload params) and level; per version its median tps, and the
    mean CPU iowait (%), device utilisation (%) and device write rate (MB/s = 10^6 bytes/s)
    over the measurement, from the OS telemetry (`means`: selectors.telemetry_means of the
    compared runs)."""
    labels = version_labels(comparisons)
    params = evidence_params(comparisons)
    rows = []
    for comparison in comparisons:
        workload = comparison.series[0].run.workload
        columns = by_label(comparison, labels)
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


def _evidence_cell(
    series: Series | None, clients: int, means: TelemetryMeans
) -> EvidenceCell | None:
    if series is None or clients not in series.levels:
        return None
    count, iowait, util, write = means.get((series.run.id, clients), (0, None, None, None))
    return EvidenceCell(
        tps=level_tps(series, clients),
        iowait_pct=iowait,
        disk_util_pct=util,
        disk_write_mb_s=None if write is None else write / 1e6,
        samples=count,
    )


def _param_text(value: Any) -> str:
    return "" if value is None else str(value)
