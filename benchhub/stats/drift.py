"""Slow drift in a series of results: a level that loses a little every week for months, which
a change-point detector calls late, in pieces, or not at all. Pure code, no Django.

Over the last `window` values, the Mann-Kendall test (Kendall's tau of the log values against
their order, `scipy.stats.kendalltau`) says whether they trend, and the Theil-Sen slope of the
log values (`scipy.stats.theilslopes`, the median of the pairwise slopes, which an outlier or
two does not move) says how fast, as a relative change per week. A step is no drift, though it
trends too: each half of the window must trend the same way on its own (Kendall's p under
HALF_P), which the flat halves either side of a step do not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

WINDOW = 84  # runs: twelve weeks of a run a day
MIN_VALUES = 28
MAX_P = 1e-3
HALF_P = 0.05
MIN_PER_WEEK = 0.002  # a loss smaller than 0.2% a week is not worth a person's time


@dataclass(frozen=True)
class Drift:
    """A trend over the last `runs` values: `per_week` is the relative change a week (-0.005:
    0.5% lost a week), `low`/`high` its 95% interval (Theil-Sen's), `p_value` Mann-Kendall's."""

    runs: int
    per_week: float
    low: float
    high: float
    p_value: float


def _trend(logs: np.ndarray) -> tuple[float, float]:
    tau = stats.kendalltau(np.arange(len(logs)), logs)
    return float(tau.statistic), float(tau.pvalue)


def drift(
    *,
    values: Sequence[float],
    runs_per_week: float = 7.0,
    window: int = WINDOW,
    max_p: float = MAX_P,
    min_per_week: float = MIN_PER_WEEK,
) -> Drift | None:
    """The drift of the last `window` of `values` (oldest first, positive, `runs_per_week`
    apart), or None: when fewer than MIN_VALUES, when Mann-Kendall's p is not under `max_p`,
    when either half of the window does not trend the same way (p under HALF_P: a step, not a
    drift), or when the change a week is smaller than `min_per_week` either way."""
    recent = np.asarray(values[-window:], dtype=float)
    if len(recent) < MIN_VALUES or not np.all(recent > 0):
        return None
    logs = np.log(recent)
    tau, p_value = _trend(logs)
    if not p_value < max_p:
        return None
    half = len(logs) // 2
    for part in (logs[:half], logs[half:]):
        part_tau, part_p = _trend(part)
        if not (part_p < HALF_P and math.copysign(1, part_tau) == math.copysign(1, tau)):
            return None
    slope, _intercept, low, high = stats.theilslopes(logs, alpha=0.95)
    per_week = math.expm1(slope * runs_per_week)
    if abs(per_week) < min_per_week:
        return None
    return Drift(
        runs=len(logs),
        per_week=per_week,
        low=math.expm1(low * runs_per_week),
        high=math.expm1(high * runs_per_week),
        p_value=p_value,
    )
