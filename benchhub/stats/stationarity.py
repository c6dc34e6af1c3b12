"""Whether one repeat's throughput held still inside the run: a trend (Mann-Kendall) or a level
shift (a change point) in its per-second progress after the warm-up. Pure code, no Django.

A repeat whose tps fell steadily for its whole length (a table bloating, a cache being evicted,
a checkpoint storm building up) or jumped half way (autovacuum, another job on the host) has a
mean, but that mean describes no steady state: comparing it says "same" or "faster" about a
number that depends on the run's length. Such a repeat is flagged, and a verdict it takes part
in is left inconclusive until a person explains it (docs/statistics.md, "Steady inside the
run").

Per-second tps is autocorrelated (a slow second is followed by slow seconds), which makes tests
on the seconds themselves far too eager; so the seconds are first averaged into BLOCKS
contiguous blocks, and the tests read the block means:

- **trend**: Kendall's tau of the block means against their order (`scipy.stats.kendalltau`,
  the Mann-Kendall test) under MAX_P, and the Theil-Sen slope (`scipy.stats.theilslopes`)
  giving a change over the run of at least MIN_CHANGE;
- **shift**: a change point of the block means (stats.changepoints, Apache Otava, at MAX_P)
  of at least MIN_CHANGE.

A trend whose two halves do not trend the same way on their own is a shift (a step trends
too); a shift is only reported when no trend is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.ndimage import median_filter

from benchhub.stats.changepoints import change_points
from benchhub.stats.repeats import block_length, warmup_s

BLOCKS = 20
# Fewer independent blocks than this cannot show a trend at MAX_P (Kendall's exact p with 6
# values in order is 0.0014): such a run is not checked.
MIN_BLOCKS = 6
# Fewer steady seconds than this make blocks too short to average the noise out: not checked.
MIN_SECONDS = 30
MAX_P = 0.01
HALF_P = 0.1
# A change inside the run smaller than this is what checkpoints and the noise of a healthy run
# do; the verdicts' own practical threshold is 2%, so a 5% drift inside a run is well above it.
MIN_CHANGE = 0.05
STEP_FIT = 2 / 3


@dataclass(frozen=True)
class Unsteadiness:
    """How a repeat's tps moved inside the run: `kind` "trend" or "shift", `change` the relative
    change (end against start for a trend, after against before for a shift), `at_s` the second
    of the run a shift happened at (None for a trend), `p_value` the test's."""

    kind: str
    change: float
    at_s: float | None
    p_value: float

    def reason(self) -> str:
        if self.kind == "trend":
            return (
                f"tps {'fell' if self.change < 0 else 'rose'} {abs(self.change):.1%} over the "
                f"run (a trend: Mann-Kendall p={self.p_value:.1g})"
            )
        return (
            f"tps {'fell' if self.change < 0 else 'rose'} {abs(self.change):.1%} at "
            f"{self.at_s:.0f} s (a level shift: change point p={self.p_value:.1g})"
        )


def _blocks(values: np.ndarray) -> list[np.ndarray]:
    """Contiguous blocks of the seconds, at most BLOCKS of them and each at least twice the
    Politis-White block length of the seconds around their running median over a fifth of the
    run (the span over which they stay correlated, without the trend or the shift being looked
    for), so that the block means are close to independent."""
    width = max(5, values.size // 5) | 1
    around = values - median_filter(values, size=width, mode="nearest")
    # Seconds that sit exactly on their running median are not correlated with anything.
    correlated = 2 * block_length(around) if np.ptp(around) > 0 else 1
    size = max(values.size // BLOCKS, correlated)
    return np.array_split(values, max(1, values.size // size))


def _trend(means: np.ndarray) -> tuple[float, float]:
    result = stats.kendalltau(np.arange(means.size), means)
    tau = float(result.statistic)
    return (0.0, 1.0) if math.isnan(tau) else (tau, float(result.pvalue))


def _halves_agree(means: np.ndarray, tau: float) -> bool:
    half = means.size // 2
    for part in (means[:half], means[half:]):
        part_tau, part_p = _trend(part)
        if not (part_p < HALF_P and math.copysign(1, part_tau) == math.copysign(1, tau)):
            return False
    return True


def unsteadiness(*, t: Sequence[float], tps: Sequence[float]) -> Unsteadiness | None:
    """The trend or level shift of a repeat's steady-state seconds (`t`, the end of each
    second's interval, and its `tps`, warm-up already left out, in time order), or None: when
    it held still, or with fewer than MIN_SECONDS seconds or a mean of 0 tps."""
    values = np.asarray(tps, dtype=float)
    if values.size < MIN_SECONDS or not np.mean(values) > 0:
        return None
    blocks = _blocks(values)
    if len(blocks) < MIN_BLOCKS:
        return None
    means = np.array([float(np.mean(b)) for b in blocks])
    level = float(np.median(means))
    tau, p_value = _trend(means)
    slope, intercept = (float(x) for x in stats.theilslopes(means)[:2])
    change = slope * (means.size - 1) / level
    trend = None
    if p_value < MAX_P and abs(change) >= MIN_CHANGE:
        trend = Unsteadiness(kind="trend", change=change, at_s=None, p_value=p_value)
        if _halves_agree(means, tau):
            return trend
    shift, step = _shift(means, blocks, t)
    if shift is None or trend is None:
        return shift or trend
    # Both read the block means: the one that fits them clearly better is what happened (a
    # step has a free place to put itself, so it must leave a third less unexplained).
    line = intercept + slope * np.arange(means.size)
    step_better = np.sum((means - step) ** 2) < STEP_FIT * np.sum((means - line) ** 2)
    return shift if step_better else trend


def _shift(
    means: np.ndarray, blocks: list[np.ndarray], t: Sequence[float]
) -> tuple[Unsteadiness | None, np.ndarray]:
    """The largest change point of the block means, and the levels it fits them with."""
    points = change_points(values=[float(m) for m in means], max_p=MAX_P, min_change=MIN_CHANGE)
    if not points:
        return None, means
    point = max(points, key=lambda p: abs(p.change))
    step = np.where(np.arange(means.size) < point.index, point.before, point.after)
    first_second = sum(b.size for b in blocks[: point.index])
    found = Unsteadiness(
        kind="shift", change=point.change, at_s=float(t[first_second]), p_value=point.p_value
    )
    return found, step


def repeat_unsteadiness(
    samples: Sequence[tuple[float, float | None]], *, duration_s: float | None = None
) -> Unsteadiness | None:
    """unsteadiness() of a repeat's (t, tps) progress samples as stored, after the warm-up that
    its steady-state mean leaves out (stats.repeats.warmup_s)."""
    ordered = sorted((t, v) for t, v in samples if v is not None)
    if not ordered:
        return None
    cut = warmup_s(duration_s if duration_s else ordered[-1][0])
    steady = [(t, v) for t, v in ordered if t > cut]
    return unsteadiness(t=[t for t, _ in steady], tps=[v for _, v in steady])
