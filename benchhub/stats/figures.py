"""Plain figures for comparing versions: change against a baseline, geometric mean of ratios,
peak throughput. No Django here; the selectors hand in plain numbers. Whether a difference is
real is the verdicts' question (stats.verdicts, compare.assessment), not these figures'.
"""

import math
from collections.abc import Mapping


def change_pct(baseline: float | None, value: float | None) -> float | None:
    """(value - baseline) / baseline in percent; None when either is missing or baseline is 0."""
    if baseline is None or value is None or baseline == 0:
        return None
    return (value - baseline) / baseline * 100.0


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
