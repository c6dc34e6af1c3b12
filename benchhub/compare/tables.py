"""The comparison as a table: one row per client level, one summary per version, and the same
rows as CSV and JSON. The page, the API and the CSV export all read these, so they agree."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

from benchhub.compare import statistics
from benchhub.compare.describe import hardware_text, length_text
from benchhub.compare.selectors import Comparison, Series
from benchhub.results.models import Run


@dataclass
class Cell:
    """One version at one client level. `beyond_spread` compares with the baseline."""

    tps: float | None
    tps_min: float | None
    tps_max: float | None
    samples: int
    change_pct: float | None
    beyond_spread: bool | None


@dataclass
class Row:
    clients: int
    cells: list[Cell | None]


@dataclass
class Summary:
    label: str
    peak_tps: float | None
    peak_clients: int | None
    geomean_ratio: float | None
    is_summary: bool


def _spread(series: Series, clients: int) -> statistics.Spread | None:
    level = series.levels.get(clients)
    if level is None or level.tps_min is None or level.tps_max is None:
        return None
    return statistics.Spread(low=level.tps_min, high=level.tps_max, samples=level.samples)


def _medians(series: Series) -> dict[int, float | None]:
    return {c: a.tps_median for c, a in series.levels.items()}


def comparison_rows(comparison: Comparison) -> list[Row]:
    base = comparison.baseline
    if base is None:
        return []
    rows = []
    for clients in comparison.clients:
        cells: list[Cell | None] = []
        base_level = base.levels.get(clients)
        for series in comparison.series:
            level = series.levels.get(clients)
            if level is None:
                cells.append(None)
                continue
            cells.append(
                Cell(
                    tps=level.tps_median,
                    tps_min=level.tps_min,
                    tps_max=level.tps_max,
                    samples=level.samples,
                    change_pct=statistics.change_pct(
                        base_level.tps_median if base_level else None, level.tps_median
                    ),
                    beyond_spread=statistics.beyond_spread(
                        _spread(base, clients), _spread(series, clients)
                    ),
                )
            )
        rows.append(Row(clients=clients, cells=cells))
    return rows


def comparison_summary(comparison: Comparison) -> list[Summary]:
    base = comparison.baseline
    if base is None:
        return []
    summaries = []
    for series in comparison.series:
        top = statistics.peak(_medians(series))
        summaries.append(
            Summary(
                label=series.label,
                peak_tps=top[0] if top else None,
                peak_clients=top[1] if top else None,
                geomean_ratio=statistics.geometric_mean_ratio(_medians(base), _medians(series)),
                is_summary=series.is_summary,
            )
        )
    return summaries


def measured_on(run: Run) -> str:
    """What a run was measured on, in one line, for captions."""
    return (
        f"{run.host.name}: {hardware_text(run)}; scale {run.scale or 'unknown'}; "
        f"{length_text(run)}; {run.repeats} repeat(s); "
        f"pgbench {run.pgbench_version or 'unknown'}; config {run.config.hash[:8]}"
    )


def captions(comparison: Comparison) -> list[str]:
    """One caption when every series was measured on the same; else one per setting."""
    return series_captions([(s.label, s.run) for s in comparison.series])


def series_captions(labelled: list[tuple[str, Run]]) -> list[str]:
    """One caption when every (label, run) was measured on the same; else one per distinct
    setting, naming the runs measured on it."""
    lines = [(label, measured_on(run)) for label, run in labelled]
    if not lines:
        return []
    if len({text for _, text in lines}) == 1:
        return [f"Measured on {lines[0][1]}."]
    grouped: dict[str, list[str]] = {}
    for label, text in lines:
        grouped.setdefault(text, []).append(label)
    return [f"{', '.join(labels)} measured on {text}." for text, labels in grouped.items()]


def _label(series: Series) -> str:
    return f"{series.label} (summary import)" if series.is_summary else series.label


def comparison_data(comparison: Comparison) -> dict[str, Any]:
    """The comparison as JSON-ready data (the API's body)."""
    rows = comparison_rows(comparison)
    return {
        "series": [
            {
                "label": _label(s),
                "version": s.run.build.version,
                "run": str(s.run.uuid),
                "source": s.run.source,
                "invalid": s.run.invalid,
                "measured_on": measured_on(s.run),
            }
            for s in comparison.series
        ],
        "missing": comparison.missing,
        "partial": [
            {
                "label": note.label,
                "stop_clients": note.stop_clients,
                "reason": note.reason,
                "completed_clients": note.completed,
            }
            for note in comparison.partial
        ],
        "compared_clients": comparison.clients,
        "mixed_keys": comparison.mixed_keys,
        "differences": [
            {"name": d.name, "values": [list(v) for v in d.values], "details": d.details}
            for d in comparison.differences
        ],
        "rows": [
            {
                "clients": row.clients,
                "versions": [
                    {"label": _label(s), **(vars(cell) if cell else {"tps": None})}
                    for s, cell in zip(comparison.series, row.cells, strict=True)
                ],
            }
            for row in rows
        ],
        "summary": [vars(s) for s in comparison_summary(comparison)],
    }


CSV_COLUMNS = [
    "clients",
    "version",
    "run",
    "source",
    "tps_median",
    "tps_min",
    "tps_max",
    "repeats",
    "change_pct",
    "beyond_spread",
]


def comparison_csv(comparison: Comparison) -> str:
    """The table as CSV: one line per (client level, version), baseline first."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in comparison_rows(comparison):
        for series, cell in zip(comparison.series, row.cells, strict=True):
            if cell is None:
                continue
            writer.writerow(
                [
                    row.clients,
                    series.label,
                    series.run.uuid,
                    series.run.source,
                    _num(cell.tps),
                    _num(cell.tps_min),
                    _num(cell.tps_max),
                    cell.samples,
                    _num(cell.change_pct),
                    "" if cell.beyond_spread is None else str(cell.beyond_spread).lower(),
                ]
            )
    return out.getvalue()


def _num(value: float | None) -> str:
    return "" if value is None else repr(value)
