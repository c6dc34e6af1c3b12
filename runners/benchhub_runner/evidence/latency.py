"""Latency distribution from pgbench's per-transaction log (`-l --sampling-rate`).

Each line is `client_id transaction_no time file_no time_epoch time_us [lag] [retries]`, the
time in microseconds, or a word (`skipped`, `failed`, `serialization`, `deadlock`, `other`) for
a transaction that did not complete (docs of every pgbench from 9.2 to 18 agree on the first
six columns). One file per pgbench thread: `<prefix>.<pid>` and `<prefix>.<pid>.<thread>`.

Percentiles use the nearest-rank method: the p-th percentile is the smallest latency with at
least p% of the transactions at or below it, always a latency that was logged.
"""

from __future__ import annotations

import io
import math
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..sandbox.jobfs import list_files, open_file

MAX_BINS = 60
PERCENTILES = {"p50_ms": 50.0, "p90_ms": 90.0, "p99_ms": 99.0, "p999_ms": 99.9}


def read_latencies(paths: Iterable[Path], *, trusted: Path | None = None) -> array[float]:
    """Latencies in milliseconds of the completed transactions in the log files; with
    `trusted` (the job's directory, above which the files are the job's to replace), each
    opened without following a link."""
    values: array[float] = array("d")
    for path in paths:
        raw = open_file(path, trusted=trusted) if trusted else open(path, "rb")  # noqa: SIM115
        with io.TextIOWrapper(raw, encoding="ascii", errors="replace") as log:
            for line in log:
                fields = line.split()
                if len(fields) >= 6 and fields[2].isdigit():
                    values.append(int(fields[2]) / 1000.0)
    return values


def nearest_rank(ordered: array[float] | list[float], percent: float) -> float:
    """The nearest-rank percentile of sorted values: the value at rank ceil(p/100 * n)."""
    rank = max(1, math.ceil(percent / 100.0 * len(ordered) - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]


def histogram(ordered: list[float], *, bins: int = MAX_BINS) -> dict[str, list[Any]]:
    """Counts over logarithmically spaced edges from the smallest to the largest latency
    (latency spans decades; even bins would put almost everything in the first one)."""
    low, high = max(ordered[0], 0.001), max(ordered[-1], 0.001)
    if high <= low * 1.0001:
        edges = [math.floor(low * 1e4) / 1e4, math.ceil(high * 1e4) / 1e4 + 0.001]
        return {"edges_ms": edges, "counts": [len(ordered)]}
    ratio = (high / low) ** (1.0 / bins)
    edges = [low * ratio**i for i in range(bins + 1)]
    edges[-1] = high
    counts = [0] * bins
    scale = math.log(ratio)
    for value in ordered:
        index = int(math.log(max(value, low) / low) / scale) if value > low else 0
        counts[min(index, bins - 1)] += 1
    rounded = [round(e, 4) for e in edges]
    # Rounded outwards at the ends, so every latency lies within the edges.
    rounded[0], rounded[-1] = math.floor(low * 1e4) / 1e4, math.ceil(high * 1e4) / 1e4
    return {"edges_ms": rounded, "counts": counts}


def summary(latencies: Iterable[float], *, sampling_rate: float) -> dict[str, Any] | None:
    """The evidence's `latency` (None without a completed transaction)."""
    ordered = sorted(latencies)
    if not ordered:
        return None
    result: dict[str, Any] = {"sampling_rate": sampling_rate, "transactions": len(ordered)}
    for key, percent in PERCENTILES.items():
        result[key] = round(nearest_rank(ordered, percent), 3)
    result["max_ms"] = round(ordered[-1], 3)
    result["histogram"] = histogram(ordered)
    return result


def log_files(directory: Path, *, trusted: Path | None = None) -> list[Path]:
    """The log files in `directory`; with `trusted`, listed without following links."""
    if trusted is not None:
        return list_files(directory, trusted=trusted)
    return sorted(p for p in directory.iterdir() if p.is_file())
