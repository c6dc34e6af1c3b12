"""How much a host's results vary from run to run, and what that lets a comparison see. Pure
code (numpy, scipy), no Django.

Run-to-run variation is measured as the standard deviation of log(tps) between repeats of the
same build and configuration at one client level, pooled over every such group a host has run:
for variations of a few percent it is the coefficient of variation (0.015 = 1.5 %). It is what
decides how small a difference a comparison can tell apart, and it usually dominates the noise
within a run.

Power: a comparison with n repeats a side calls a level faster or slower when the 95% interval
of the log ratio, a pooled Student's t interval (see verdicts), excludes 0. Its chance of doing
so for a true difference comes from the noncentral t distribution (scipy.stats.nct).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize
from scipy.special import nctdtr, stdtrit

ALPHA = 0.05
POWER = 0.8
MAX_REPEATS = 100
# Beyond this many standard errors a difference is detected for certain, and scipy's noncentral
# t returns NaN far out in its tail.
SURE_SHIFT = 30.0


@dataclass(frozen=True)
class HostNoise:
    """Run-to-run variation of one host at one workload and client level.

    `cv` is the pooled standard deviation of log(value) between repeats of one run (about the
    coefficient of variation); `dof` its degrees of freedom (repeats minus groups); `groups`
    the number of runs (or series of repeats) it was pooled from.
    """

    cv: float
    dof: int
    groups: int

    def __post_init__(self) -> None:
        if not (math.isfinite(self.cv) and self.cv >= 0) or self.dof < 1:
            raise ValueError(f"noise needs cv >= 0 and dof >= 1, got {self.cv!r}, {self.dof!r}")


@dataclass(frozen=True)
class Spread:
    """One group's repeats as the pooled variation needs them: how many there are, and the sum
    of the squared deviations of their logs from the group's mean (a database computes it with
    var_pop(ln(value)) x count, see compare.assessment)."""

    count: int
    squares: float


def log_spread(values: Sequence[float]) -> Spread:
    """The Spread of one group of values (tps, or latency).

    Raises ValueError for a value that is not a positive number.
    """
    logs = np.asarray(values, dtype=float)
    if logs.size and not (np.all(np.isfinite(logs)) and np.all(logs > 0)):
        raise ValueError("run values must be positive numbers")
    if logs.size < 2:
        return Spread(count=int(logs.size), squares=0.0)
    logs = np.log(logs)
    return Spread(count=int(logs.size), squares=float(np.sum((logs - logs.mean()) ** 2)))


def host_noise(*, groups: Iterable[Sequence[float]]) -> HostNoise | None:
    """The pooled run-to-run variation of `groups`, each the values (tps, or latency) of the
    repeats of one build and configuration at one level on this host. Groups of one value say
    nothing about variation and are skipped; None when no group has two.

    Raises ValueError for a value that is not a positive number.
    """
    return pooled_noise(log_spread(group) for group in groups)


def pooled_noise(spreads: Iterable[Spread]) -> HostNoise | None:
    """host_noise from each group's Spread: the squares pooled over the groups of two values or
    more, with their degrees of freedom (count - 1 each); None when there is none."""
    squares = 0.0
    dof = 0
    used = 0
    for spread in spreads:
        if spread.count < 2:
            continue
        squares += max(spread.squares, 0.0)
        dof += spread.count - 1
        used += 1
    if dof == 0:
        return None
    return HostNoise(cv=math.sqrt(squares / dof), dof=dof, groups=used)


def power(*, log_difference: float, cv: float, repeats: int, dof: float) -> float:
    """Chance that the two-sided 95% t interval of the log ratio excludes 0, for a true log
    ratio `log_difference`, `repeats` a side and run-to-run variation `cv` known to `dof`."""
    if cv == 0:
        return 1.0 if log_difference else ALPHA
    shift = abs(log_difference) / (cv * math.sqrt(2 / repeats))
    return _power_at(shift, dof)


def _power_at(shift: float, dof: float) -> float:
    if shift >= SURE_SHIFT:
        return 1.0
    critical = stdtrit(dof, 1 - ALPHA / 2)
    # The far tail (a significant difference of the wrong sign) underflows to NaN in scipy.
    wrong_sign = float(np.nan_to_num(nctdtr(dof, shift, -critical)))
    return _nct_sf(critical, dof, shift) + wrong_sign


def detectable_difference(
    *, noise: HostNoise, repeats: int, chance: float = POWER, pooled: bool = True
) -> float:
    """The smallest relative difference (0.04 = 4 %) that `repeats` a side call faster or slower
    with probability `chance` on a host with this noise. `pooled`: the verdict pools the host's
    history with the compared runs (more degrees of freedom), as `verdicts` does when given it.
    """
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    dof = _dof(noise, repeats, pooled)
    if dof < 1:
        return math.inf
    if noise.cv == 0:
        return 0.0

    return math.expm1(_detectable_shift(dof, chance) * noise.cv * math.sqrt(2 / repeats))


@functools.lru_cache(maxsize=1024)
def _detectable_shift(dof: int, chance: float) -> float:
    """The true difference, in standard errors of the log ratio, detected with probability
    `chance` at `dof` degrees of freedom: power depends on nothing else, so the levels of a
    page that share their degrees of freedom share one root-finding."""
    return float(optimize.brentq(lambda s: _power_at(s, dof) - chance, 0.0, SURE_SHIFT))


def repeats_needed(
    *,
    log_ratio: float,
    cv: float,
    threshold: float,
    prior_dof: int = 0,
    chance: float = POWER,
    limit: int = MAX_REPEATS,
    paired: bool = False,
) -> int | None:
    """Repeats a side that would likely (with probability `chance`) settle a level whose log
    ratio and run-to-run variation stay as observed: either the interval excludes 1 (faster or
    slower) or it fits inside +-threshold (the same). None beyond `limit`: the observed
    difference sits too close to the threshold for more repeats to settle it soon. `paired`:
    the interval is over pairs (verdicts.paired_ratio, `cv` per side), with n - 1 degrees of
    freedom for n pairs instead of the pooled interval's 2n - 2.
    """

    def settles(repeats: int) -> bool:
        dof = prior_dof + (repeats - 1 if paired else 2 * repeats - 2)
        differs = power(log_difference=log_ratio, cv=cv, repeats=repeats, dof=dof)
        return differs >= chance or _same_chance(log_ratio, cv, threshold, repeats, dof) >= chance

    # Both chances grow with the repeats: a bisection finds the fewest in a handful of
    # evaluations of the noncentral t, where a scan took up to a hundred (a page has one such
    # search per inconclusive level).
    low, high = 2, limit
    if limit < 2 or not settles(high):
        return None
    while low < high:
        middle = (low + high) // 2
        if settles(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _same_chance(log_ratio: float, cv: float, threshold: float, repeats: int, dof: int) -> float:
    """Chance that the 95% interval falls inside the band: the Bonferroni lower bound from its
    two one-sided tests (each at 2.5 %), close when the band is wide against the noise."""
    low, high = math.log1p(-threshold), math.log1p(threshold)
    if not low < log_ratio < high:
        return 0.0
    se = cv * math.sqrt(2 / repeats)
    if se == 0:
        return 1.0
    critical = stdtrit(dof, 1 - ALPHA / 2)
    below = _one_sided(critical, dof, (high - log_ratio) / se)
    above = _one_sided(critical, dof, (log_ratio - low) / se)
    return max(0.0, below + above - 1)


def _one_sided(critical: float, dof: float, shift: float) -> float:
    return 1.0 if shift >= SURE_SHIFT else _nct_sf(critical, dof, shift)


def _nct_sf(x: float, dof: float, shift: float) -> float:
    """P(T > x) for the noncentral t with `dof` and noncentrality `shift`: scipy.special's
    nctdtr, the function scipy.stats.nct evaluates, without scipy.stats' per-call checks (some
    70 us a call; a page's search for the repeats a level needs makes hundreds). As one minus
    the distribution function it is exact to about 1e-16, far finer than a chance needs."""
    return min(1.0, max(0.0, 1.0 - float(np.nan_to_num(nctdtr(dof, shift, x), nan=1.0))))


def _dof(noise: HostNoise, repeats: int, pooled: bool) -> int:
    return (noise.dof if pooled else 0) + 2 * repeats - 2
