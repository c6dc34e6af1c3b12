"""Plotly figures as plain data: {"data", "layout", "config"}. The view hands a figure to the page
with json_script and the page's JS calls Plotly.newPlot(el, data, layout, config).

Client counts go on a log2 axis (1, 2, 4, ... spaced evenly) with the measured counts as ticks,
as in the published pgbench charts. Error bars span the min..max of the valid repeats, the same
spread the comparison table judges differences by (stats.figures).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from benchhub.compare.presentations import Progress
from benchhub.compare.selectors import Comparison, History, Series
from benchhub.compare.splits import Split
from benchhub.regressions.models import Regression

PALETTE = [
    "#2f5fa7",
    "#d1495b",
    "#2e933c",
    "#edae49",
    "#7a4eab",
    "#00798c",
    "#8d6a4f",
    "#e07a5f",
    "#3d405b",
    "#81b29a",
    "#f2a1c8",
    "#6c757d",
]


def _config(filename: str) -> dict[str, Any]:
    # The modebar stays visible so "Download plot as a png" is always one click away.
    return {
        "displayModeBar": True,
        "displaylogo": False,
        "responsive": True,
        "toImageButtonOptions": {"format": "png", "filename": filename, "scale": 2},
    }


def _clients_axis(clients: list[int]) -> dict[str, Any]:
    axis: dict[str, Any] = {"title": {"text": "clients"}, "tickvals": clients}
    if clients and min(clients) > 0:
        axis.update(type="log", ticktext=[str(c) for c in clients])
        low, high = math.log10(min(clients)), math.log10(max(clients))
        pad = max((high - low) * 0.05, 0.05)
        axis["range"] = [low - pad, high + pad]
    return axis


def _layout(title: str, y_title: str, clients: list[int]) -> dict[str, Any]:
    return {
        "title": {"text": title},
        "xaxis": _clients_axis(clients),
        "yaxis": {"title": {"text": y_title}, "rangemode": "tozero"},
        "legend": {"orientation": "h", "y": -0.2},
        "margin": {"l": 70, "r": 20, "t": 50, "b": 90},
        "height": 440,
        "hovermode": "x unified",
    }


def _name(series: Series) -> str:
    name = f"{series.label} (summary import)" if series.is_summary else series.label
    return f"{name} (marked invalid)" if series.run.invalid else name


def _trace(series: Series, index: int, field: str) -> dict[str, Any]:
    levels = [series.levels[c] for c in sorted(series.levels)]
    suffix = "_ms" if field == "latency" else ""
    median = [getattr(a, f"{field}_median{suffix}") for a in levels]
    low = [getattr(a, f"{field}_min{suffix}") for a in levels]
    high = [getattr(a, f"{field}_max{suffix}") for a in levels]
    color = PALETTE[index % len(PALETTE)]
    return {
        "type": "scatter",
        "mode": "lines+markers",
        "name": _name(series),
        "x": [a.clients for a in levels],
        "y": median,
        "line": {"color": color, "dash": "dot" if series.is_summary else "solid"},
        "marker": {"color": color, "size": 7},
        "error_y": {
            "type": "data",
            "symmetric": False,
            "array": [_gap(h, m) for h, m in zip(high, median, strict=True)],
            "arrayminus": [_gap(m, lo) for m, lo in zip(median, low, strict=True)],
            "color": color,
            "thickness": 1.2,
            "width": 4,
        },
    }


def _gap(a: float | None, b: float | None) -> float:
    return 0.0 if a is None or b is None else max(a - b, 0.0)


def tps_figure(comparison: Comparison, *, title: str) -> dict[str, Any]:
    """tps (median of repeats) against clients, one trace per version, error bars min..max."""
    return {
        "data": [_trace(s, i, "tps") for i, s in enumerate(comparison.series)],
        "layout": _layout(title, "tps (median of repeats)", comparison.clients),
        "config": _config("benchhub-compare-tps"),
    }


def latency_figure(comparison: Comparison, *, title: str) -> dict[str, Any]:
    """Average latency (median of repeats, ms) against clients, one trace per version."""
    return {
        "data": [_trace(s, i, "latency") for i, s in enumerate(comparison.series)],
        "layout": _layout(title, "latency average, ms (median of repeats)", comparison.clients),
        "config": _config("benchhub-compare-latency"),
    }


# p50 solid, p90 dashed, p99 dotted: one colour per version, one dash per percentile.
PERCENTILE_DASHES = {"p50_ms": "solid", "p90_ms": "dash", "p99_ms": "dot"}


def latency_percentiles_figure(
    comparison: Comparison,
    latency: dict[int, dict[int, dict[str, float | None]]],
    *,
    title: str,
) -> dict[str, Any] | None:
    """Latency p50, p90 and p99 (ms, each the median over the set's repeats of the sampled
    transaction log's; compare.selectors.latency) against clients: per version one trace per
    percentile, in the version's colour. None when no compared run has percentiles."""
    traces = []
    for index, series in enumerate(comparison.series):
        levels = latency.get(series.run.id, {})
        color = PALETTE[index % len(PALETTE)]
        for key, dash in PERCENTILE_DASHES.items():
            points = [(c, p[key]) for c, p in sorted(levels.items()) if p.get(key) is not None]
            if not points:
                continue
            traces.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": f"{_name(series)} {key.removesuffix('_ms')}",
                    "legendgroup": series.label,
                    "x": [c for c, _ in points],
                    "y": [v for _, v in points],
                    "line": {"color": color, "dash": dash},
                    "marker": {"color": color, "size": 6},
                }
            )
    if not traces:
        return None
    layout = _layout(title, "latency, ms (median of repeats)", comparison.clients)
    # Tails span decades between p50 and p99 and between 1 and hundreds of clients.
    layout["yaxis"] = {"title": {"text": "latency, ms (median of repeats)"}, "type": "log"}
    return {"data": traces, "layout": layout, "config": _config("benchhub-compare-percentiles")}


CHANGE_COLOURS: dict[str, str] = {
    Regression.Kind.REGRESSION: "#b3261e",
    Regression.Kind.IMPROVEMENT: "#2e933c",
}


def _change_markers(changes: Sequence[Regression]) -> dict[str, list[dict[str, Any]]]:
    """A dashed vertical line at the first run after each detected change, labelled with the
    change and its state (regressions.selectors.history_markers)."""
    shapes, annotations = [], []
    for change in changes:
        x = change.run_after.started_at.isoformat()
        colour = CHANGE_COLOURS.get(change.kind, "#6c757d")
        shapes.append(_vertical_line(x, colour=colour, dash="dash"))
        annotations.append(
            {
                "x": x,
                "xref": "x",
                "yref": "paper",
                "y": 1,
                "yanchor": "bottom",
                "showarrow": False,
                "font": {"color": colour, "size": 11},
                "text": f"{change.change * 100:+.1f}% ({change.get_state_display()})",
            }
        )
    return {"shapes": shapes, "annotations": annotations}


SPLIT_COLOUR = "#6c757d"


def _broken_line(history: History) -> dict[str, list[Any]]:
    starts = {split.index for split in history.splits}
    x: list[Any] = []
    y: list[Any] = []
    for index, point in enumerate(history.points):
        if index in starts:
            x.append(None)
            y.append(None)
        x.append(point.started_at.isoformat())
        y.append(point.tps_median)
    return {"x": x, "y": y}


def _split_markers(splits: Sequence[Split]) -> dict[str, list[dict[str, Any]]]:
    """A dotted vertical line at the first run after each split of the line (compare.splits),
    labelled "not like with like": the runs either side differ in more than the version."""
    shapes, annotations = [], []
    for split in splits:
        x = split.started_at.isoformat()
        shapes.append(_vertical_line(x, colour=SPLIT_COLOUR, dash="dot"))
        annotations.append(
            {
                "x": x,
                "xref": "x",
                "yref": "paper",
                "y": 0,
                "yanchor": "top",
                "showarrow": False,
                "font": {"color": SPLIT_COLOUR, "size": 10},
                "text": "not like with like",
                "hovertext": "; ".join(split.reasons),
            }
        )
    return {"shapes": shapes, "annotations": annotations}


def history_figure(
    history: History, *, title: str, changes: Sequence[Regression] = ()
) -> dict[str, Any]:
    """tps at one client level over time: a grey line through every run in time order, one
    marker trace per version so each version has its colour and legend entry, a dashed line
    at each detected change (`changes`, oldest first) and a dotted one at each split of the
    line (History.splits), where the runs stop being like with like."""
    points = history.points
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "all runs",
            # A gap (null) before each split: the line never joins runs that are not alike.
            **_broken_line(history),
            "line": {"color": "#c3c8d2", "width": 1.5},
            "hoverinfo": "skip",
            "showlegend": False,
        }
    ]
    versions: list[str] = []
    for p in points:
        if p.version not in versions:
            versions.append(p.version)
    for index, version in enumerate(versions):
        mine = [p for p in points if p.version == version]
        color = PALETTE[index % len(PALETTE)]
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": version,
                "x": [p.started_at.isoformat() for p in mine],
                "y": [p.tps_median for p in mine],
                "text": [f"{p.version} · run {str(p.run_uuid)[:8]}" for p in mine],
                "customdata": [str(p.run_uuid) for p in mine],
                "marker": {
                    "color": color,
                    "size": 10,
                    "symbol": ["diamond" if p.is_summary else "circle" for p in mine],
                },
                "error_y": {
                    "type": "data",
                    "symmetric": False,
                    "array": [_gap(p.tps_max, p.tps_median) for p in mine],
                    "arrayminus": [_gap(p.tps_median, p.tps_min) for p in mine],
                    "color": color,
                },
            }
        )
    return {
        "data": data,
        "layout": {
            "title": {"text": title},
            "xaxis": {"title": {"text": "run started"}, "type": "date"},
            "yaxis": {"title": {"text": "tps (median of repeats)"}, "rangemode": "tozero"},
            "legend": {"orientation": "h", "y": -0.2, "title": {"text": "version"}},
            "margin": {"l": 70, "r": 20, "t": 70, "b": 90},
            "height": 440,
            **{
                name: changed + split
                for (name, changed), split in zip(
                    _change_markers(changes).items(),
                    _split_markers(history.splits).values(),
                    strict=True,
                )
            },
        },
        "config": _config("benchhub-history"),
    }


def progress_figure(progress: Progress, *, title: str) -> dict[str, Any]:
    """tps per `-P` interval over the run at one level, one line per version (the repeat
    named in the legend)."""
    data = []
    for index, line in enumerate(progress.lines):
        color = PALETTE[index % len(PALETTE)]
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": f"{line.label} (repeat {line.repeat})",
                "x": line.t,
                "y": line.tps,
                "line": {"color": color},
                "marker": {"color": color, "size": 5},
            }
        )
    return {
        "data": data,
        "layout": {
            "title": {"text": title},
            "xaxis": {"title": {"text": "seconds into the measurement"}, "rangemode": "tozero"},
            "yaxis": {
                "title": {"text": f"tps per {progress.interval_s} s interval"},
                "rangemode": "tozero",
            },
            "legend": {"orientation": "h", "y": -0.2},
            "margin": {"l": 70, "r": 20, "t": 50, "b": 90},
            "height": 440,
            "hovermode": "x unified",
        },
        "config": _config("benchhub-progress"),
    }


def _vertical_line(x: str, *, colour: str, dash: str) -> dict[str, Any]:
    """A line across the whole plot at time `x`: a change, or a split of the series."""
    return {
        "type": "line",
        "xref": "x",
        "yref": "paper",
        "x0": x,
        "x1": x,
        "y0": 0,
        "y1": 1,
        "line": {"color": colour, "width": 1.5, "dash": dash},
    }
