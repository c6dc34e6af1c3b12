"""Changes in a series of runs, with the size of each and its 95% interval. Pure code, no Django.

The change points are stats.changepoints' (Apache Otava's E-Divisive with a t test,
docs/statistics.md); each carries the p of a second, windowed test of its neighbourhood
(stats.changepoints.window_p_value), which must agree before the change is sent (CONFIRM). Each
change is measured between the segments either side of it (from the previous change point, or
the start of the series, to the next one, or its end): the ratio of their means minus one, with
a percentile bootstrap interval (scipy.stats.bootstrap, a fixed seed so that detecting again
gives the same figures). A segment of a single run has no interval.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from benchhub.stats.changepoints import ChangePoint, change_points, window_p_value

CONFIDENCE = 0.95
RESAMPLES = 2000
SEED = 20261123
# A change found again within this many runs of a stored, untriaged one of the same kind is
# that one, moved (regressions.services): as runs arrive, a change's place moves by a run or two.
MOVE_RUNS = 3
# A stored change is sent to its subscribers once this many detections (one after each upload of
# the series) found it with the windowed test agreeing (its p under WINDOW_P): a change found over
# the first runs after a step and gone a run later, or one the runs around it do not bear out
# (a second mode, dips in 6% noise), is most of the false alerts as uploaded (docs/statistics.md,
# "Alerts as uploaded"). WINDOW_P was chosen on a corpus of another seed than the checked-in one.
CONFIRM = 3
WINDOW_P = 0.01

# What finds the change points of one segment: stats.changepoints' defaults in the product; the
# quality measurement (regressions.quality) passes others to compare them.
Detector = Callable[[Sequence[float]], list[ChangePoint]]


def default_detector(values: Sequence[float]) -> list[ChangePoint]:
    return change_points(values=values)


@dataclass(frozen=True)
class Change:
    """A change in the level of a series; `index` is that of the first value after it."""

    index: int
    before: float
    after: float
    before_count: int
    after_count: int
    change: float
    low: float | None
    high: float | None
    p_value: float
    # The windowed test's p (stats.changepoints.window_p_value) in the change's segment.
    window_p: float

    @property
    def agreed(self) -> bool:
        """Whether the windowed test bears the change out (a detection that counts towards
        CONFIRM)."""
        return self.window_p < WINDOW_P


def _ratio(after: np.ndarray, before: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(after, axis=axis) / np.mean(before, axis=axis) - 1.0


def change_interval(
    before: Sequence[float], after: Sequence[float]
) -> tuple[float | None, float | None]:
    """95% percentile-bootstrap interval of mean(after) / mean(before) - 1; (None, None) when a
    side has fewer than two values or the before mean is not positive."""
    if len(before) < 2 or len(after) < 2 or np.mean(before) <= 0:
        return None, None
    result = stats.bootstrap(
        (np.asarray(after, dtype=float), np.asarray(before, dtype=float)),
        _ratio,
        n_resamples=RESAMPLES,
        confidence_level=CONFIDENCE,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(SEED),
    )
    low, high = result.confidence_interval
    return float(low), float(high)


def changes(values: Sequence[float], *, detect: Detector = default_detector) -> list[Change]:
    """The changes in `values` (oldest first), each with its segments and interval."""
    points = detect(values)
    bounds = [0, *(p.index for p in points), len(values)]
    found = []
    for number, point in enumerate(points, start=1):
        before = [float(v) for v in values[bounds[number - 1] : bounds[number]]]
        after = [float(v) for v in values[bounds[number] : bounds[number + 1]]]
        low, high = change_interval(before, after)
        mean_before, mean_after = float(np.mean(before)), float(np.mean(after))
        found.append(
            Change(
                index=point.index,
                before=mean_before,
                after=mean_after,
                before_count=len(before),
                after_count=len(after),
                change=mean_after / mean_before - 1.0 if mean_before > 0 else point.change,
                low=low,
                high=high,
                p_value=point.p_value,
                window_p=window_p_value(values, point.index),
            )
        )
    return found


def series_changes(
    *, values: Sequence[float], splits: Sequence[int], detect: Detector = default_detector
) -> list[Change]:
    """The changes of each segment of `values` between its splits (`splits`: the index of the
    first value after each), indexed in the whole series: a change point is never called
    across a split (what the runs hold equal changed there). Each is one stored Regression."""
    bounds = [0, *sorted(splits), len(values)]
    found = []
    for start, end in itertools.pairwise(bounds):
        if end > start:
            for change in changes(values[start:end], detect=detect):
                found.append(replace(change, index=change.index + start))
    return found
