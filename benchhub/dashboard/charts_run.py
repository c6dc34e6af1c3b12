"""The run page's charts as plotly figure dicts: per client level, the per-second progress of
each repeat (tps above, latency below) and the OS telemetry the agent sampled while pgbench ran.

Plain dicts, so the template hands them over with json_script and static/js/run.js draws them.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from benchhub.results.models import Result
from benchhub.results.selectors import MAX_CHART_POINTS, ProgressPoints

PALETTE = ("#2f5fa7", "#d9822b", "#1e7a34", "#b3261e", "#7a4fb3", "#4a8a8c", "#8c6d1f", "#555")
TELEMETRY_SERIES = (
    ("cpu_user_pct", "CPU user %", "y"),
    ("cpu_system_pct", "CPU system %", "y"),
    ("cpu_iowait_pct", "CPU iowait %", "y"),
    ("disk_util_pct", "disk util %", "y"),
    ("client_cpu_pct", "pgbench CPU %", "y"),
    ("disk_write_bytes_per_s", "disk write MB/s", "y2"),
)
MB = 1024 * 1024


def _layout(title: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title, "font": {"size": 14}},
        "margin": {"l": 60, "r": 60, "t": 40, "b": 90},
        # Below the x axis title, so neither covers the other.
        "legend": {"orientation": "h", "x": 0, "y": -0.22, "yanchor": "top"},
        "hovermode": "x unified",
        **extra,
    }


def progress_figure(
    results: Sequence[Result], clients: int, points: Mapping[int, ProgressPoints]
) -> dict[str, Any] | None:
    """tps (top) and latency in ms (bottom) per second, one colour per repeat; None without
    progress samples. `points`: each result's progress by result id (selectors.progress_points,
    bounded to MAX_CHART_POINTS a line)."""
    data: list[dict[str, Any]] = []
    for index, result in enumerate(results):
        line = points.get(result.pk)
        if line is None or not line.t:
            continue
        color = PALETTE[index % len(PALETTE)]
        name = f"repeat {result.repeat}"
        common = {"type": "scatter", "mode": "lines", "x": line.t, "legendgroup": name}
        data.append({**common, "y": line.tps, "name": name, "line": {"color": color}})
        data.append(
            {
                **common,
                "y": line.latency_ms,
                "name": f"{name} latency",
                "showlegend": False,
                "yaxis": "y2",
                "line": {"color": color, "dash": "dot"},
            }
        )
    if not data:
        return None
    return {
        "data": data,
        "layout": _layout(
            f"{clients} client(s): progress per second",
            xaxis={"title": {"text": "seconds"}, "anchor": "y2"},
            yaxis={"title": {"text": "tps"}, "domain": [0.5, 1], "rangemode": "tozero"},
            yaxis2={"title": {"text": "latency ms"}, "domain": [0, 0.42], "rangemode": "tozero"},
        ),
    }


def telemetry_figure(results: Sequence[Result], clients: int) -> dict[str, Any] | None:
    """CPU and disk utilisation in % (left axis) and disk writes in MB/s (right axis) over the
    seconds of each repeat; None when the agent sent no telemetry. The results are read with
    their telemetry joined (results.selectors.result_list, with_telemetry)."""
    data = []
    for result in results:
        samples = result.telemetry
        if not samples:
            continue
        # Every step-th sample: a line of at most MAX_CHART_POINTS points.
        samples = samples[:: -(-len(samples) // MAX_CHART_POINTS)]
        suffix = f" #{result.repeat}" if len(results) > 1 else ""
        t = [s.get("t") for s in samples]
        for index, (key, label, axis) in enumerate(TELEMETRY_SERIES):
            values = [s.get(key) for s in samples]
            if all(v is None for v in values):
                continue
            if key == "disk_write_bytes_per_s":
                values = [None if v is None else v / MB for v in values]
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "x": t,
                    "y": values,
                    "name": label + suffix,
                    "legendgroup": label,
                    "yaxis": axis,
                    "line": {"color": PALETTE[index % len(PALETTE)], "width": 1.5},
                    "opacity": 1.0 if result.repeat == results[0].repeat else 0.55,
                }
            )
    if not data:
        return None
    return {
        "data": data,
        "layout": _layout(
            f"{clients} client(s): OS telemetry",
            xaxis={"title": {"text": "seconds"}},
            yaxis={"title": {"text": "%"}, "range": [0, 100]},
            yaxis2={
                "title": {"text": "MB/s written"},
                "overlaying": "y",
                "side": "right",
                "rangemode": "tozero",
                "showgrid": False,
            },
        ),
    }
