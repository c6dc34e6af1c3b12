"""Per-interval statistics shared by the transaction-log and aggregate-log parsers.

Both logs become a list of :class:`IntervalStats`, so the dashboard draws one kind of series
whatever the source. Percentiles exist only when computed from the per-transaction log; the
aggregate log carries sums, not samples, so its percentiles are ``None``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .text import dataclass_to_json


@dataclass
class IntervalStats:
    """One interval of a log: ``start`` is integer Unix seconds; latencies are milliseconds.

    ``transactions`` counts successful transactions only (``tps`` is derived from it);
    ``failed`` and ``skipped`` are counted apart, as pgbench does from 15 on.
    """

    start: int
    interval_s: int
    transactions: int = 0
    tps: float = 0.0
    failed: int = 0
    skipped: int = 0
    retried: int | None = None
    retries: int | None = None
    serialization_failures: int | None = None
    deadlock_failures: int | None = None
    latency_avg_ms: float | None = None
    latency_stddev_ms: float | None = None
    latency_min_ms: float | None = None
    latency_max_ms: float | None = None
    p50_ms: float | None = None
    p90_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    lag_avg_ms: float | None = None
    lag_max_ms: float | None = None


@dataclass
class LogSeries:
    """A parsed log: ``intervals`` in time order and ``total`` over the whole log."""

    kind: str
    intervals: list[IntervalStats] = field(default_factory=list)
    total: IntervalStats | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return a strict-JSON-ready dict (non-finite floats become ``None``)."""
        return dataclass_to_json(self)


def percentile(sorted_values: Sequence[float], fraction: float) -> float | None:
    """Linear-interpolation percentile (numpy's default) of already sorted values."""
    if not sorted_values:
        return None
    position = (len(sorted_values) - 1) * fraction
    lower = math.floor(position)
    upper = min(lower + 1, len(sorted_values) - 1)
    weight = position - lower
    return sorted_values[lower] * (1 - weight) + sorted_values[upper] * weight


def mean_and_stddev(total: float, total_sq: float, count: int) -> tuple[float | None, float | None]:
    """Population mean and standard deviation from a sum and a sum of squares, as pgbench does.

    Rounding can make the variance slightly negative; it is clamped to 0 rather than ``nan``.
    """
    if count <= 0:
        return None, None
    mean = total / count
    variance = total_sq / count - mean * mean
    return mean, math.sqrt(max(variance, 0.0))
