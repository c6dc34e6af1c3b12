"""The comparison as a table: one row per client level, one summary per version, the verdicts,
and the same rows as CSV and JSON. The page, the API and the CSV export all read these, so they
agree. The verdicts come from compare.assessment (pooled repeats, intervals, Holm)."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from typing import Any

from django.urls import reverse
from django.utils import timezone

from benchhub.compare.assessment import Assessment, LevelRow, VersionAssessment
from benchhub.compare.describe import Difference, hardware_text, length_text
from benchhub.compare.knees import knee_data
from benchhub.compare.presentations import tables_data
from benchhub.compare.selectors import Comparison, ComparisonShown, History, Series
from benchhub.compare.splits import segment_differences
from benchhub.compare.verdict_text import interval_unit_text
from benchhub.compare.why import why_data
from benchhub.results.models import Run
from benchhub.stats import figures


@dataclass
class Cell:
    """One version at one client level: the median tps of its set of runs, and against the
    baseline the verdict (None for the baseline, or without repeats on a side).

    `change_pct` is the change the verdict is made of (its tps ratio, of the geometric means of
    the pooled repeats, as a percentage), the one figure the page, the API, the CSV and the CLI
    print as "change"; None where there is no verdict. The medians beside it are labelled as
    medians: their own ratio can differ, and is never printed as a change."""

    tps: float | None
    tps_min: float | None
    tps_max: float | None
    samples: int
    change_pct: float | None
    verdict: LevelRow | None = None
    # pgbench itself was the bottleneck at this level, on this side or the baseline's.
    client_bound: bool = False
    # Latency percentiles (ms) from the sampled transaction logs: each the median over the
    # set's repeats that carry it (selectors.latency); None where no repeat does.
    latency_p50_ms: float | None = None
    latency_p90_ms: float | None = None
    latency_p99_ms: float | None = None


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
    geomean_low: float | None
    geomean_high: float | None
    is_summary: bool


def _medians(series: Series) -> dict[int, float | None]:
    return {c: a.tps_median for c, a in series.levels.items()}


def comparison_rows(
    comparison: Comparison,
    assessment: Assessment | None = None,
    *,
    latency: dict[int, dict[int, dict[str, float | None]]] | None = None,
) -> list[Row]:
    """One row per compared level, one cell per version; `latency` (selectors.latency) fills
    the cells' percentiles."""
    base = comparison.baseline
    latency = latency or {}
    if base is None:
        return []
    rows = []
    for clients in comparison.clients:
        cells: list[Cell | None] = []
        for series in comparison.series:
            level = series.levels.get(clients)
            if level is None:
                cells.append(None)
                continue
            verdict = assessment.row(series, clients) if assessment else None
            percentiles = latency.get(series.run.id, {}).get(clients, {})
            cells.append(
                Cell(
                    tps=level.tps_median,
                    tps_min=level.tps_min,
                    tps_max=level.tps_max,
                    samples=level.samples,
                    change_pct=(verdict.verdict.tps.value - 1) * 100 if verdict else None,
                    verdict=verdict,
                    client_bound=clients in series.client_bound | base.client_bound,
                    latency_p50_ms=percentiles.get("p50_ms"),
                    latency_p90_ms=percentiles.get("p90_ms"),
                    latency_p99_ms=percentiles.get("p99_ms"),
                )
            )
        rows.append(Row(clients=clients, cells=cells))
    return rows


def comparison_summary(comparison: Comparison, assessment: Assessment) -> list[Summary]:
    """Each version's peak, and its geometric-mean tps ratio to the baseline over the levels
    with repeats on both sides (of the pooled steady-state means), with its 95% interval."""
    curves = {v.series.run.id: v.curve for v in assessment.versions}
    summaries = []
    for series in comparison.series:
        top = figures.peak(_medians(series))
        curve = curves.get(series.run.id)
        summaries.append(
            Summary(
                label=series.label,
                peak_tps=top[0] if top else None,
                peak_clients=top[1] if top else None,
                geomean_ratio=curve.geomean if curve else None,
                geomean_low=curve.low if curve else None,
                geomean_high=curve.high if curve else None,
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


def set_lines(comparison: Comparison) -> list[str]:
    """Each version's set of runs in a sentence: how many, on which hosts, from which jobs,
    over which dates (`13.3: 3 runs on bench-02 (jobs 4, 7), 2026-11-12 to 2026-11-13`)."""
    lines = []
    for s in comparison.series:
        runs = s.pooled or [s.run]
        hosts = sorted({r.host.name for r in runs})
        jobs = sorted({r.job_id for r in runs if r.job_id is not None})
        days = sorted({r.started_at.date().isoformat() for r in runs})
        text = f"{s.label}: {len(runs)} run{'s' if len(runs) != 1 else ''} on {', '.join(hosts)}"
        if jobs:
            text += f" (job{'s' if len(jobs) != 1 else ''} {', '.join(map(str, jobs[:10]))})"
        text += f", {days[0]}" + (f" to {days[-1]}" if len(days) > 1 else "")
        lines.append(text)
    return lines


def pooled_hosts(comparison: Comparison) -> list[str]:
    """The hosts whose runs the comparison's sets hold, by name."""
    return sorted({r.host.name for s in comparison.series for r in s.pooled or [s.run]})


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


def client_bound_levels(comparison: Comparison, version: VersionAssessment) -> list[int]:
    """The levels of a version's verdict at which its set or the baseline's was client-bound."""
    base = comparison.baseline
    bound = version.series.client_bound | (base.client_bound if base else set())
    return sorted(c for c in version.levels if c in bound)


def unlike_notes(comparison: Comparison) -> list[str]:
    """Why the verdicts are not like with like (runs included on purpose that differ in what a
    set holds equal), one sentence per version, for the page and the API."""
    return [
        f"{note.label}'s set includes {note.runs} run{'s' if note.runs != 1 else ''} that "
        f"differ{'s' if note.runs == 1 else ''}: {'; '.join(note.reasons)}"
        for note in comparison.unlike
    ]


def _version_data(version: VersionAssessment, comparison: Comparison) -> dict[str, Any]:
    curve = version.curve
    bound = client_bound_levels(comparison, version)
    return {
        "label": version.label,
        "summary": version.summary if curve else None,
        "like_with_like": not comparison.unlike,
        "not_like_with_like": unlike_notes(comparison),
        "client_bound_clients": bound,
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
        "p_difference": level.p_difference,
        "p_same": level.p_same,
        "mann_whitney_p": level.mann_whitney_p,
        "cliffs_delta": level.cliffs_delta,
        "repeats_needed": level.repeats_needed,
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


@dataclass(frozen=True)
class HistoryRow:
    """One point of a history as its table row shows it, formatted once here: a template's
    filters (date, floatformat, url) on every cell of 500 rows were most of the page's time."""

    started: str
    version: str
    is_summary: bool
    invalid: bool
    run_url: str
    run_short: str
    tps_median: str
    tps_min: str
    tps_max: str
    samples: int


def history_rows(history: History) -> list[HistoryRow]:
    """The history's points as table rows, oldest first (times in the current time zone, tps
    to one decimal as the page's other tables)."""
    # One reverse() for the pattern; each row's UUID takes the placeholder's place.
    placeholder = "00000000-0000-0000-0000-000000000000"
    run_url = reverse("run", args=[placeholder])
    return [
        HistoryRow(
            started=timezone.localtime(p.started_at).strftime("%Y-%m-%d %H:%M"),
            version=p.version,
            is_summary=p.is_summary,
            invalid=p.invalid,
            run_url=run_url.replace(placeholder, str(p.run_uuid)),
            run_short=str(p.run_uuid)[:8],
            tps_median=_one_decimal(p.tps_median),
            tps_min=_one_decimal(p.tps_min),
            tps_max=_one_decimal(p.tps_max),
            samples=p.samples,
        )
        for p in history.points
    ]


def history_differences(history: History) -> list[Difference]:
    """What differs between the segments of a History line (compare.splits), for the
    differences banner Compare shows too; each segment named by its first run's start."""
    labels = [
        f"from {timezone.localtime(p.started_at).strftime('%Y-%m-%d %H:%M')}"
        for p in history.points
    ]
    return segment_differences(history.held, history.splits, labels)


def _one_decimal(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"
