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


@dataclass
class Figure:
    """One measured number. `target` is a bound ("<= 100 ms", ">= 100 uploads/s") read with
    `op`; `floor` is what the same work costs at its cheapest (e.g. COPY), when there is one."""

    section: str
    name: str
    value: float
    unit: str
    op: str | None = None  # "<=" or ">=" when there is a target
    target: float | None = None
    floor: float | None = None
    note: str = ""

    @property
    def met(self) -> bool | None:
        if self.op is None or self.target is None or math.isnan(self.value):
            return None
        return self.value <= self.target if self.op == "<=" else self.value >= self.target

    def as_dict(self, machine: str) -> dict[str, Any]:
        return {**asdict(self), "met": self.met, "machine": machine}


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


def _fmt(value: float | None) -> str:
    if value is None:
        return ""
    if math.isnan(value):
        return "n/a"
    if abs(value) >= 100 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:.3g}"


def table(figures: list[Figure]) -> str:
    """The figures as a plain-text table: section, figure, value, target, floor, verdict."""
    rows = [("section", "figure", "value", "target", "floor", "")]
    for f in figures:
        target = f"{f.op} {_fmt(f.target)} {f.unit}" if f.op and f.target is not None else ""
        floor = f"{_fmt(f.floor)} {f.unit}" if f.floor is not None else ""
        verdict = {True: "met", False: "MISSED", None: ""}[f.met]
        rows.append((f.section, f.name, f"{_fmt(f.value)} {f.unit}", target, floor, verdict))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def write_results(
    path: Path, *, figures: list[Figure], info: dict[str, Any], options: dict[str, Any]
) -> None:
    """bench/results.json: the machine, the options of the run and every figure."""
    label = machine_label(info)
    document = {
        "machine": info,
        "options": options,
        "figures": [f.as_dict(label) for f in figures],
    }
    path.write_text(json.dumps(document, indent=2, default=str) + "\n")
