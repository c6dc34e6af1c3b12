"""The evidence figures as plotly figure dicts: wait events as stacked bars, latency
percentiles over clients, the latency distribution at one level, flame graphs and a
differential flame graph.

Flame graphs are plotly icicles built from the folded stacks (`frame;frame;... count`), the
root at the bottom as flame graphs draw it. A stack's width is its share of the profile's
samples; frames below MIN_SHARE of the samples are left out, so that a page never carries tens
of thousands of boxes. The differential
icicle sizes each frame by the mean of its two shares and colours it by the change in share
(second version minus first, in percentage points): red grew, blue shrank.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from benchhub.dashboard.charts import PALETTE, _clients_axis, _config

MIN_SHARE = 0.002
MAX_NODES = 3000
TOP_WAITS = 12
ROOT = "all"


def _folded_counts(folded: str) -> dict[tuple[str, ...], int]:
    """Inclusive sample counts of every stack prefix (the frames from the root)."""
    counts: dict[tuple[str, ...], int] = {}
    for line in folded.splitlines():
        frames, _, number = line.rpartition(" ")
        if not frames or not number.isdigit():
            continue
        path: tuple[str, ...] = ()
        for frame in frames.split(";"):
            path = (*path, frame)
            counts[path] = counts.get(path, 0) + int(number)
    return counts


def _total(counts: dict[tuple[str, ...], int]) -> int:
    return sum(value for path, value in counts.items() if len(path) == 1)


def _kept(shares: dict[tuple[str, ...], float]) -> list[tuple[str, ...]]:
    """Paths worth a box: at least MIN_SHARE, the widest first up to MAX_NODES, parents kept
    before children (a child is never wider than its parent)."""
    wide = sorted((p for p, s in shares.items() if s >= MIN_SHARE), key=lambda p: -shares[p])
    kept = set(wide[:MAX_NODES])
    return sorted((p for p in kept if p[:-1] in kept or len(p) == 1), key=len)


def _node_id(path: tuple[str, ...]) -> str:
    return ROOT + "".join(f";{frame}" for frame in path)


def _icicle(
    paths: list[tuple[str, ...]], values: dict[tuple[str, ...], float], **trace: Any
) -> dict[str, Any]:
    return {
        "type": "icicle",
        "ids": [ROOT, *(_node_id(p) for p in paths)],
        "labels": [ROOT, *(p[-1] for p in paths)],
        "parents": ["", *(_node_id(p[:-1]) for p in paths)],
        "values": [round(sum(values[p] for p in paths if len(p) == 1), 6)]
        + [round(values[p], 6) for p in paths],
        "branchvalues": "total",
        "tiling": {"orientation": "v", "flip": "y"},
        "maxdepth": 12,
        **trace,
    }


def _flame_layout(title: str) -> dict[str, Any]:
    return {
        "title": {"text": title, "font": {"size": 14}},
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
        "height": 520,
    }


def flame_figure(*, folded: str, title: str) -> dict[str, Any] | None:
    """A flame graph of one profile (widths: % of its samples); None when it has no sample."""
    counts = _folded_counts(folded)
    total = _total(counts)
    if not total:
        return None
    shares = {path: count / total for path, count in counts.items()}
    paths = _kept(shares)
    trace = _icicle(
        paths,
        {p: shares[p] * 100 for p in paths},
        hovertemplate="%{label}<br>%{value:.2f}% of samples<extra></extra>",
        marker={"colorscale": "YlOrRd", "colors": [0.0, *(len(p) for p in paths)]},
    )
    return {"data": [trace], "layout": _flame_layout(title), "config": _config("benchhub-flame")}


def flame_diff_figure(*, before: str, after: str, title: str) -> dict[str, Any] | None:
    """The differential flame graph of `after` against `before`: widths the mean share (%),
    colour the change in share (percentage points, after minus before). None when either
    profile has no sample."""
    counts_a, counts_b = _folded_counts(before), _folded_counts(after)
    total_a, total_b = _total(counts_a), _total(counts_b)
    if not total_a or not total_b:
        return None
    share_a = {p: c / total_a for p, c in counts_a.items()}
    share_b = {p: c / total_b for p, c in counts_b.items()}
    union = set(share_a) | set(share_b)
    mean = {p: (share_a.get(p, 0.0) + share_b.get(p, 0.0)) / 2 for p in union}
    paths = _kept(mean)
    change = [(share_b.get(p, 0.0) - share_a.get(p, 0.0)) * 100 for p in paths]
    bound = max((abs(c) for c in change), default=0.0) or 1.0
    trace = _icicle(
        paths,
        {p: mean[p] * 100 for p in paths},
        customdata=[0.0, *change],
        hovertemplate="%{label}<br>mean %{value:.2f}% of samples<br>"
        "change %{customdata:+.2f} points<extra></extra>",
        marker={
            "colors": [0.0, *change],
            # plotly's RdBu runs from blue (low) to red (high).
            "colorscale": "RdBu",
            "cmin": -bound,
            "cmax": bound,
            "cmid": 0,
            "showscale": True,
            "colorbar": {"title": {"text": "change, points"}},
        },
    )
    return {
        "data": [trace],
        "layout": _flame_layout(title),
        "config": _config("benchhub-flame-diff"),
    }


def waits_figure(*, sides: Sequence[tuple[str, dict[str, float]]], title: str) -> dict[str, Any]:
    """Wait events as stacked bars, one bar per side (label, event -> share), in % of sampled
    active backends; the TOP_WAITS largest events overall, the rest as "other"."""
    overall: dict[str, float] = {}
    for _, waits in sides:
        for name, share in waits.items():
            overall[name] = overall.get(name, 0.0) + share
    top = sorted(overall, key=lambda n: -overall[n])[:TOP_WAITS]
    data = []
    for index, name in enumerate(top):
        data.append(
            {
                "type": "bar",
                "name": name,
                "x": [label for label, _ in sides],
                "y": [round(waits.get(name, 0.0) * 100, 2) for _, waits in sides],
                "marker": {"color": "#9aa5b1" if name == "CPU" else PALETTE[index % len(PALETTE)]},
                "hovertemplate": f"{name}: %{{y:.1f}}%<extra>%{{x}}</extra>",
            }
        )
    rest = [sum(s for n, s in waits.items() if n not in top) * 100 for _, waits in sides]
    if any(value > 0.05 for value in rest):
        data.append(
            {
                "type": "bar",
                "name": "other",
                "x": [label for label, _ in sides],
                "y": [round(value, 2) for value in rest],
                "marker": {"color": "#dddddd"},
            }
        )
    return {
        "data": data,
        "layout": {
            "title": {"text": title, "font": {"size": 14}},
            "barmode": "stack",
            "yaxis": {"title": {"text": "% of sampled active backends"}, "range": [0, 100]},
            "xaxis": {"type": "category"},
            "legend": {"orientation": "h", "y": -0.15},
            "margin": {"l": 60, "r": 20, "t": 40, "b": 90},
            "height": 420,
        },
        "config": _config("benchhub-waits"),
    }


def percentiles_figure(
    *,
    lines: Sequence[tuple[str, dict[int, dict[str, float]], dict[int, float | None]]],
    clients: list[int],
    title: str,
) -> dict[str, Any]:
    """Latency over clients, per version (label, clients -> percentiles ms, clients -> average
    ms): p50 solid, p99 dashed, the average dotted."""
    data = []
    for index, (label, percentiles, average) in enumerate(lines):
        colour = PALETTE[index % len(PALETTE)]
        for key, name, dash in (("p50_ms", "p50", "solid"), ("p99_ms", "p99", "dash")):
            levels = [c for c in clients if percentiles.get(c, {}).get(key) is not None]
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": f"{label} {name}",
                    "x": levels,
                    "y": [percentiles[c][key] for c in levels],
                    "line": {"color": colour, "dash": dash},
                    "marker": {"color": colour, "size": 6},
                }
            )
        levels = [c for c in clients if average.get(c) is not None]
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"{label} average",
                "x": levels,
                "y": [average[c] for c in levels],
                "line": {"color": colour, "dash": "dot", "width": 1},
            }
        )
    return {
        "data": data,
        "layout": {
            "title": {"text": title, "font": {"size": 14}},
            "xaxis": _clients_axis(clients),
            "yaxis": {"title": {"text": "latency, ms"}, "type": "log"},
            "legend": {"orientation": "h", "y": -0.2},
            "margin": {"l": 70, "r": 20, "t": 40, "b": 90},
            "height": 440,
            "hovermode": "x unified",
        },
        "config": _config("benchhub-latency-percentiles"),
    }


def histogram_figure(
    *, sides: Sequence[tuple[str, dict[str, list[float]]]], title: str
) -> dict[str, Any]:
    """The latency distribution of each side (label, histogram), as % of its sampled
    transactions per bin, so sides with different sample sizes compare."""
    data = []
    for index, (label, histogram) in enumerate(sides):
        edges, counts = histogram["edges_ms"], histogram["counts"]
        total = sum(counts) or 1
        data.append(
            {
                "type": "bar",
                "name": label,
                "x": [(a + b) / 2 for a, b in pairwise(edges)],
                "width": [b - a for a, b in pairwise(edges)],
                "y": [round(c * 100 / total, 3) for c in counts],
                "opacity": 0.6,
                "marker": {"color": PALETTE[index % len(PALETTE)]},
                "hovertemplate": "%{x:.3f} ms: %{y:.2f}%<extra>" + label + "</extra>",
            }
        )
    return {
        "data": data,
        "layout": {
            "title": {"text": title, "font": {"size": 14}},
            "barmode": "overlay",
            "xaxis": {"title": {"text": "latency, ms"}},
            "yaxis": {"title": {"text": "% of sampled transactions"}},
            "legend": {"orientation": "h", "y": -0.2},
            "margin": {"l": 60, "r": 20, "t": 40, "b": 90},
            "height": 400,
        },
        "config": _config("benchhub-latency-histogram"),
    }
