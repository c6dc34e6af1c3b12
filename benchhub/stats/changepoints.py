"""Change points in a series of results (one value per run, in version, commit or time order):
where did the level move, by how much, and how sure is it. Pure code, no Django.

The detection is Apache Otava's (`otava.analysis.compute_change_points`, the method of "Hunter:
Using Change Point Detection to Hunt for Performance Regressions", Fleming et al., ICPE 2023):
E-Divisive over sliding windows proposes candidates, then a Student's t test between the
segments either side of each keeps those below `max_p`, merging the weakest away first. It is
deterministic (no permutation test).

Cost is bounded by looking at the `recent` last values only: about 10 ms for 200 values
(docs/statistics.md has the figures). Three settings are ours, chosen on a labelled corpus of
pgbench-like history (regressions.corpus, measured by regressions.quality; docs/statistics.md,
"Detection quality on labelled history"): a stricter p than Otava's default (5e-5 against
1e-3); a level must hold MIN_RUNS values (a checkpoint's dip in one or two runs is no
regression, and the newest runs are a level once three agree); and a change must be at least
MIN_CHANGE_NOISES times the series' own run-to-run noise (series_noise), so that a quiet
series does not report a change nobody would act on. Otava's t test reads the values as they
are, and a few dips of 10 to 35% in a series of 1% noise swell its variance until a real 3%
step is not significant: a value more than OUTLIER_NOISES times the noise from the median of
the OUTLIER_WINDOW values around it is read as that median (outliers_damped) for finding the
change points; their sizes are measured on the values as they are (regressions.detection).

A second opinion on a change point, window_p_value, tests only its neighbourhood, by ranks (the
Mann-Whitney U test of the WINDOW_RUNS values either side): regressions.detection sends a
change only once it agrees.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from otava.analysis import TTestSignificanceTester, compute_change_points, merge
from scipy import stats
from scipy.ndimage import median_filter

MAX_P = 5e-5
MIN_RUNS = 3
MIN_CHANGE_NOISES = 1.25
OUTLIER_NOISES = 5.0
OUTLIER_WINDOW = 5
RECENT = 200
# Otava's sliding window for proposing candidates; its default.
SPLIT_WINDOW = 50
# Fewer values cannot hold a change with a segment on each side worth testing.
MIN_VALUES = 6
# The windowed test's reach either side of a change point (window_p_value).
WINDOW_RUNS = 10


@dataclass(frozen=True)
class ChangePoint:
    """A change in the level of a series.

    `index` is the position (in the series given) of the first value after the change;
    `before`/`after` the means of the values since the previous change point and up to the
    next one; `change` is after / before - 1; `p_value` that of the t test between them.
    """

    index: int
    before: float
    after: float
    change: float
    p_value: float


def change_points(
    *,
    values: Sequence[float] | np.ndarray,
    recent: int = RECENT,
    max_p: float = MAX_P,
    min_change: float | None = None,
    min_runs: int = MIN_RUNS,
    outlier_noises: float = OUTLIER_NOISES,
) -> list[ChangePoint]:
    """The change points among the last `recent` of `values`, oldest first. `min_change`
    (0.05 = 5 %) drops changes smaller than that, after the p test; None: MIN_CHANGE_NOISES
    times the noise of these values (series_noise). `min_runs` drops the change points around
    a level held by fewer values than that (a low outlier or two is no level; the newest values
    are a level once `min_runs` of them agree), then tests the rest again
    (short_levels_merged). `outlier_noises` damps the outliers first (outliers_damped; 0: not).
    `min_runs=1, min_change=0, outlier_noises=0` is Otava as it comes.

    Raises ValueError for a value (among the recent ones) that is not a finite number, or for
    recent < MIN_VALUES.
    """
    if recent < MIN_VALUES:
        raise ValueError(f"recent must be at least {MIN_VALUES}, got {recent!r}")
    offset = max(0, len(values) - recent)
    window = [float(v) for v in values[offset:]]
    if not all(math.isfinite(v) for v in window):
        raise ValueError("a series' values must be finite numbers")
    if len(window) < MIN_VALUES:
        return []
    noise = series_noise(window)
    if min_change is None:
        min_change = MIN_CHANGE_NOISES * noise
    if outlier_noises and noise > 0:
        window = outliers_damped(window, noise=noise, noises=outlier_noises)
    found, _weak = compute_change_points(
        window, window_len=SPLIT_WINDOW, max_pvalue=max_p, min_magnitude=min_change
    )
    if min_runs > 1:
        found = short_levels_merged(
            found, window, min_runs=min_runs, max_p=max_p, min_change=min_change
        )
    return [
        ChangePoint(
            index=offset + int(point.index),
            before=float(point.stats.mean_1),
            after=float(point.stats.mean_2),
            change=float(point.stats.forward_rel_change()),
            p_value=float(point.stats.pvalue),
        )
        for point in found
    ]


def _short_level(points: list[Any], count: int, min_runs: int) -> int | None:
    """The position (in `points`) of the change point to drop for the shortest level held by
    fewer than `min_runs` values (of the two around a level inside the series, the smaller
    change), or None when every level is long enough."""
    bounds = [0, *(int(p.index) for p in points), count]
    lengths = [bounds[i + 1] - bounds[i] for i in range(len(bounds) - 1)]
    shortest = min(range(len(lengths)), key=lambda i: (lengths[i], i))
    if lengths[shortest] >= min_runs:
        return None
    if shortest == 0:
        return 0
    if shortest == len(points):
        return len(points) - 1
    before, after = points[shortest - 1], points[shortest]
    return (
        shortest - 1
        if before.stats.change_magnitude() < after.stats.change_magnitude()
        else shortest
    )


def short_levels_merged(
    found: list[Any], values: list[float], *, min_runs: int, max_p: float, min_change: float
) -> list[Any]:
    """Otava's change points `found` in `values` without those around a level of fewer than
    `min_runs` values: the shortest such level first, one change point dropped at a time (of
    the two around a level inside the series, the smaller change: a step next to an outlier
    keeps its place), until none is left; then the rest are tested again between their new
    neighbours and merged by Otava's own step (its t test at `max_p`, `min_change`), as its
    detection ends, which removes what was only the edge of an outlier."""
    points = list(found)
    dropped = False
    while points:
        drop = _short_level(points, len(values), min_runs)
        if drop is None:
            break
        del points[drop]
        dropped = True
    if not dropped or not points:
        return points
    tester = TTestSignificanceTester(max_p)
    intervals = tester.get_intervals(points)
    tested = [tester.change_point(p.to_candidate(), values, intervals) for p in points]
    return list(merge(tested, values, max_p, min_change))


def series_noise(values: Sequence[float] | np.ndarray) -> float:
    """A series' run-to-run noise, as the sd of log values, from the differences between
    neighbours (their median absolute deviation, scaled to a normal sd, over sqrt(2)): a step
    or an outlier moves one or two differences, not the median. 0 for fewer than 3 values, or
    when one is not positive (a relative noise needs a level above 0)."""
    array = np.asarray(values, dtype=float)
    if len(array) < 3 or not np.all(array > 0):
        return 0.0
    logs = np.log(array)
    steps = np.diff(logs)
    mad = float(np.median(np.abs(steps - np.median(steps))))
    return 1.4826 * mad / math.sqrt(2)


def outliers_damped(values: list[float], *, noise: float, noises: float) -> list[float]:
    """`values` with each one further than `noises` times the relative `noise` from the median
    of the OUTLIER_WINDOW values centred on it (the ends repeated at the edges) replaced by
    that median: a lone dip or spike, not a level. A step keeps its values: from its second
    run on, the median is on its side."""
    array = np.asarray(values, dtype=float)
    median = median_filter(array, size=OUTLIER_WINDOW, mode="nearest")
    far = np.abs(array - median) > noises * noise * np.abs(median)
    return [float(v) for v in np.where(far, median, array)]


def window_p_value(
    values: Sequence[float] | np.ndarray, index: int, *, runs: int = WINDOW_RUNS
) -> float:
    """The two-sided p of the Mann-Whitney U test (scipy.stats.mannwhitneyu) between the
    `runs` values before `index` and the `runs` from it on (fewer at the ends of `values`): a
    second opinion on a change point that looks only at its neighbourhood and at ranks, so a
    dip or a second mode does not sway it as it sways a t test over whole segments. 1.0 when a
    side has fewer than two values."""
    before = np.asarray(values[max(0, index - runs) : index], dtype=float)
    after = np.asarray(values[index : index + runs], dtype=float)
    if len(before) < 2 or len(after) < 2:
        return 1.0
    return float(stats.mannwhitneyu(before, after, alternative="two-sided").pvalue)
