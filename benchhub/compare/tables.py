"""The comparison as a table: one row per client level, one summary per version, the verdicts
(compare.shown_data gives the same rows as CSV and JSON). The page, the API and the CSV export
all read these, so they agree. The verdicts come from compare.assessment (pooled repeats,
intervals, Holm)."""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse
from django.utils import timezone

from benchhub.compare.assessment import Assessment, LevelRow, VersionAssessment
from benchhub.compare.describe import Difference, hardware_text, length_text
from benchhub.compare.selectors.comparisons import Comparison
from benchhub.compare.selectors.history import History
from benchhub.compare.splits import segment_differences
from benchhub.compare.types import Series
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
    # A repeat of this side or the baseline's moved inside its run, unexplained: no verdict.
    unsteady: bool = False
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
                    unsteady=bool(verdict and verdict.unsteady),
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
