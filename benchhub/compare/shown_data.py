"""What a comparison shows (compare.selectors.shown.comparison_show) as the compare API's JSON
body and as CSV. Apart from the tables so that the tables, which comparison_show builds, do not
import what it returns."""

from __future__ import annotations

import csv
import io
import math
from typing import Any

from benchhub.compare.assessment import LevelRow, VersionAssessment
from benchhub.compare.knees import knee_data
from benchhub.compare.presentations import tables_data
from benchhub.compare.selectors.comparisons import Comparison
from benchhub.compare.selectors.shown import ComparisonShown
from benchhub.compare.tables import (
    Cell,
    client_bound_levels,
    measured_on,
    pooled_hosts,
    unlike_notes,
)
from benchhub.compare.types import Series
from benchhub.compare.verdict_text import interval_method, interval_unit_text
from benchhub.compare.why import why_data
from benchhub.results.models import Run


def _label(series: Series) -> str:
    return f"{series.label} (summary import)" if series.is_summary else series.label


def comparison_data(shown: ComparisonShown) -> dict[str, Any]:
    """What a comparison shows (selectors.comparison_show) as JSON-ready data (the API's
    body): its runs, rows, summary, verdicts, presentation and why section."""
    comparison, assessment, rows = shown.comparison, shown.assessment, shown.rows
    base = comparison.baseline
    knees = [knee_data(k) for k in shown.knees] or [None] * len(comparison.series)
    return {
        "series": [
            {
                "label": _label(s),
                "version": s.run.build.version,
                "run": str(s.run.uuid),
                "pooled_runs": [str(r.uuid) for r in s.pooled or [s.run]],
                "runs": [_run_data(r) for r in s.pooled or [s.run]],
                "source": s.run.source,
                "invalid": s.run.invalid,
                "measured_on": measured_on(s.run),
                "knee": knee,
            }
            for s, knee in zip(comparison.series, knees, strict=True)
        ],
        "pooled_hosts": pooled_hosts(comparison),
        "left_out": [vars(note) for note in comparison.left_out],
        "like_with_like": not comparison.unlike,
        "unlike": [vars(note) for note in comparison.unlike],
        "baseline": base.label if base else None,
        "baseline_marked": comparison.baseline_marked,
        "aa": assessment.aa,
        "threshold_pct": assessment.threshold * 100,
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
                    {"label": _label(s), **(_cell_data(cell) if cell else {"tps": None})}
                    for s, cell in zip(comparison.series, row.cells, strict=True)
                ],
            }
            for row in rows
        ],
        "summary": [vars(s) for s in shown.summary],
        "verdicts": [_version_data(v, comparison) for v in assessment.versions],
        "noise": assessment.noise_text,
        "presentation": tables_data(shown.presentation),
        "why": why_data(shown.why),
    }


def _run_data(run: Run) -> dict[str, Any]:
    return {
        "uuid": str(run.uuid),
        "host": run.host.name,
        "job": run.job_id,
        "started_at": run.started_at.isoformat(),
    }


def _cell_data(cell: Cell) -> dict[str, Any]:
    data = {k: v for k, v in vars(cell).items() if k != "verdict"}
    data["verdict"] = cell.verdict.verdict.verdict.value if cell.verdict else None
    return data


CLIENT_BOUND_NOTE = (
    "pgbench itself was the bottleneck at this level (client-bound): the verdict measures the "
    "client, not the server"
)


def _version_data(version: VersionAssessment, comparison: Comparison) -> dict[str, Any]:
    curve = version.curve
    bound = client_bound_levels(comparison, version)
    return {
        "label": version.label,
        "summary": version.summary if curve else None,
        "like_with_like": not comparison.unlike,
        "not_like_with_like": unlike_notes(comparison),
        "client_bound_clients": bound,
        "unsteady_clients": sorted(c for c, row in version.levels.items() if row.unsteady),
        "counts": {k.value: n for k, n in curve.counts.items()} if curve else None,
        "geomean_ratio": curve.geomean if curve else None,
        "geomean_low": curve.low if curve else None,
        "geomean_high": curve.high if curve else None,
        "geomean_verdict": curve.verdict.value if curve else None,
        "called_different": curve.called if curve else None,
        "levels": [_level_data(row, row.clients in bound) for row in version.levels.values()],
    }


def _level_data(row: LevelRow, client_bound: bool) -> dict[str, Any]:
    level = row.verdict
    latency = level.latency
    return {
        "clients": row.clients,
        "verdict": level.verdict.value,
        "client_bound": client_bound,
        "unsteady": row.unsteady,
        "measures": "the client, not the server" if client_bound else "the server",
        "verdict_holm": row.corrected.value,
        "tps_ratio": level.tps.value,
        "tps_ratio_low": level.tps.low,
        "tps_ratio_high": level.tps.high,
        "latency_ratio": latency.value if latency else None,
        "latency_ratio_low": latency.low if latency else None,
        "latency_ratio_high": latency.high if latency else None,
        "repeats": list(level.repeats),
        "run_to_run_cv": level.tps.cv,
        "interval_unit": level.tps.unit.value if level.tps.low is not None else None,
        "interval_unit_text": interval_unit_text(level.tps),
        "interval_method": interval_method(level.tps),
        "p_difference": level.p_difference,
        "p_same": level.p_same,
        "mann_whitney_p": level.mann_whitney_p,
        "cliffs_delta": level.cliffs_delta,
        "repeats_needed": level.repeats_needed,
        "settle_text": row.settle_text,
        "host_noise_cv": row.noise.cv if row.noise else None,
        "visible_difference": row.visible
        if row.visible is not None and math.isfinite(row.visible)
        else None,
        "description": f"{row.description} {CLIENT_BOUND_NOTE}."
        if client_bound
        else row.description,
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
    "verdict",
    "tps_ratio",
    "tps_ratio_low",
    "tps_ratio_high",
]


def comparison_csv(shown: ComparisonShown) -> str:
    """The table of what a comparison shows (selectors.comparison_show) as CSV: one line per
    (client level, version), baseline first; the verdict columns are empty for the baseline."""
    comparison = shown.comparison
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in shown.rows:
        for series, cell in zip(comparison.series, row.cells, strict=True):
            if cell is None:
                continue
            level = cell.verdict.verdict if cell.verdict else None
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
                    level.verdict.value if level else "",
                    _num(level.tps.value if level else None),
                    _num(level.tps.low if level else None),
                    _num(level.tps.high if level else None),
                ]
            )
    return out.getvalue()


def _num(value: float | None) -> str:
    return "" if value is None else repr(value)
