"""Figures, their targets and floors, the machine they ran on, and the report (table + JSON)."""

from __future__ import annotations

import json
import math
import os
import platform
import socket
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.intervals import Interval, verdict


@dataclass
class Figure:
    """One measured number and its 95% interval (`low`/`high`, bench.intervals; None when the
    figure is `exact`, a count, or could not get one). `target` is a bound read with `op`:
    "<=" or ">=", or "within" the band [target, target_high]; `target_text` says it in the
    issue's words when the bound alone does not. `floor` is what the same work costs at its
    cheapest (e.g. COPY), when there is one."""

    section: str
    name: str
    value: float
    unit: str
    op: str | None = None  # "<=", ">=" or "within" when there is a target
    target: float | None = None
    floor: float | None = None
    note: str = ""
    low: float | None = None
    high: float | None = None
    target_high: float | None = None  # the band's top, for "within"
    target_text: str = ""
    exact: bool = False  # a count: no interval needed

    @classmethod
    def measured(cls, section: str, name: str, interval: Interval, unit: str, **kw: Any) -> Figure:
        """A figure from an interval of bench.intervals; its method goes into the note."""
        note = "; ".join(n for n in (kw.pop("note", ""), interval.method) if n)
        return cls(section, name, interval.value, unit, low=interval.low, high=interval.high,
                   note=note, **kw)  # fmt: skip

    @property
    def verdict(self) -> str:
        """The verdict: "met", "MISSED" or "undecided" (bench.intervals.verdict on the interval;
        an exact figure, or one without an interval, is read on its value); "" without a
        target."""
        if self.op is None or self.target is None or math.isnan(self.value):
            return ""
        low = self.value if self.low is None else self.low
        high = self.value if self.high is None else self.high
        return str(verdict(low=low, high=high, op=self.op, target=self.target,
                           target_high=self.target_high))  # fmt: skip

    @property
    def met(self) -> bool | None:
        """True when met, False when missed, None when undecided or without a target."""
        return {"met": True, "MISSED": False}.get(self.verdict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Figure:
        """A figure as as_dict wrote it (bench/results.json)."""
        return cls(**{name: data[name] for name in cls.__dataclass_fields__ if name in data})

    def as_dict(self, machine: str) -> dict[str, Any]:
        return {**asdict(self), "met": self.met, "verdict": self.verdict or None,
                "machine": machine}  # fmt: skip


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def machine() -> dict[str, Any]:
    """What the figures ran on: CPU model, logical CPUs, memory, kernel, PostgreSQL."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = int(line.split()[1]) * 1024
    except OSError:
        pass
    return {
        "hostname": socket.gethostname(),
        "cpu_model": cpu,
        "cpus": os.cpu_count(),
        "memory_bytes": memory,
        "kernel": platform.release(),
        "python": platform.python_version(),
    }


def machine_label(info: dict[str, Any]) -> str:
    return f"{info['hostname']}: {info['cpu_model']}, {info['cpus']} CPUs"


def number_text(value: float | None) -> str:
    if value is None:
        return ""
    if math.isnan(value):
        return "n/a"
    if abs(value) >= 100 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:.3g}"


def target_text(f: Figure) -> str:
    if f.op is None or f.target is None:
        return ""
    if f.target_text:
        return f.target_text
    if f.op == "within":
        return f"within {number_text(f.target)} .. {number_text(f.target_high)} {f.unit}"
    return f"{f.op} {number_text(f.target)} {f.unit}"


def interval_text(f: Figure) -> str:
    if f.exact:
        return "exact"
    if f.low is None or f.high is None:
        return "-"
    return f"{number_text(f.low)} .. {number_text(f.high)}"


def table(figures: list[Figure]) -> str:
    """The figures as a plain-text table: section, figure, value, 95% interval, target, floor,
    verdict (met, MISSED, undecided)."""
    rows = [("section", "figure", "value", "95% interval", "target", "floor", "verdict")]
    for f in figures:
        floor = f"{number_text(f.floor)} {f.unit}" if f.floor is not None else ""
        value = f"{number_text(f.value)} {f.unit}"
        rows.append((f.section, f.name, value, interval_text(f), target_text(f), floor, f.verdict))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def write_results(
    path: Path, *, figures: list[Figure], info: dict[str, Any], options: dict[str, Any]
) -> dict[str, Any]:
    """bench/results.json: the machine, the options of the run and every figure; returns the
    document written."""
    label = machine_label(info)
    document = {
        "machine": info,
        "options": options,
        "figures": [f.as_dict(label) for f in figures],
    }
    path.write_text(json.dumps(document, indent=2, default=str) + "\n")
    return json.loads(path.read_text())
