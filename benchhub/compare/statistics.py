"""Pure statistics for comparing versions: change against a baseline, spread overlap, geometric
mean of ratios, peak throughput. No Django here; the selectors hand in plain numbers.

"Beyond the run-to-run spread" uses the [min, max] range of the valid repeats of each version at
a client level: a difference is beyond the spread when the two ranges do not overlap. We chose
min/max over mean±stddev because most sweeps have 2 or 3 repeats, where a sample stddev is
itself too noisy to mean much, and min/max is what the error bars on the charts show, so the
table and the chart tell the same story. With a single repeat on either side there is no spread
to judge by, and the answer is None ("unknown"), never a confident yes.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Spread:
    """The range of one version's valid repeats at one client level (tps)."""

    low: float
    high: float
    samples: int


def change_pct(baseline: float | None, value: float | None) -> float | None:
    """(value - baseline) / baseline in percent; None when either is missing or baseline is 0."""
    if baseline is None or value is None or baseline == 0:
        return None
    return (value - baseline) / baseline * 100.0


def beyond_spread(a: Spread | None, b: Spread | None) -> bool | None:
    """True when the ranges of a and b do not overlap, False when they do, None when either
    has fewer than two repeats (or is missing)."""
    if a is None or b is None or a.samples < 2 or b.samples < 2:
        return None
    return a.high < b.low or b.high < a.low


def geometric_mean_ratio(
    baseline: Mapping[int, float | None], other: Mapping[int, float | None]
) -> float | None:
    """Geometric mean of other/baseline over the client levels where both have a positive tps;
    None when they share no such level."""
    pairs = [(baseline[c], other.get(c)) for c in baseline]
    logs = [math.log(new / old) for old, new in pairs if old and new and old > 0 and new > 0]
    if not logs:
        return None
    return math.exp(sum(logs) / len(logs))


def peak(levels: Mapping[int, float | None]) -> tuple[float, int] | None:
    """(highest tps, its client count); the fewest clients wins a tie. None without numbers."""
    best: tuple[float, int] | None = None
    for clients in sorted(levels):
        tps = levels[clients]
        if tps is not None and (best is None or tps > best[0]):
            best = (tps, clients)
    return best
