"""The knee of a throughput curve: the smallest client level past which more clients stop buying
tps (`knee`). docs/statistics.md, "The knee of the curve", states the rule.

Walking up the measured levels, the knee is the first level `c` whose next level `c'`

- **tps_not_higher**: does not have significantly higher tps: Welch's one-sided t-test on the
  logs of the two levels' repeats (scipy.stats.ttest_ind's, `alternative="greater"`, through
  scipy.special.stdtr) gives p >= `alpha`. With fewer than two repeats on a side there is no
  test; the next level then has to be higher at all (its median above this one's);
- **latency_faster_than_clients**: else, has a median latency that grew by a larger factor than
  the clients did (latency[c'] / latency[c] > c' / c): each client waits longer for every
  transaction than the added clients bring in.

No level passes either rule: the curve never saturates within the levels measured, and there
is no knee.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import pairwise

import numpy as np
from scipy.special import stdtr

ALPHA = 0.05


class KneeRule(StrEnum):
    TPS_NOT_HIGHER = "tps_not_higher"
    LATENCY_FASTER_THAN_CLIENTS = "latency_faster_than_clients"


@dataclass(frozen=True)
class CurveLevel:
    """One client level of a curve: its repeats' tps and, when known, their latencies (ms)."""

    clients: int
    tps: Sequence[float]
    latency_ms: Sequence[float] = ()


@dataclass(frozen=True)
class Knee:
    """The knee at `clients` (its median tps `tps`), found by `rule` against `next_clients`.
    `p_value`: the one-sided p that the next level's tps is higher (None without two repeats
    a side, or for a zero variance on both sides)."""

    clients: int
    tps: float
    rule: KneeRule
    next_clients: int
    p_value: float | None


def knee(levels: Sequence[CurveLevel], *, alpha: float = ALPHA) -> Knee | None:
    """The knee of the curve made of `levels` (any order; a level without a positive tps is
    left out), or None when tps keeps growing up to the largest level."""
    curve = sorted(
        (level for level in levels if any(t > 0 for t in level.tps)), key=lambda lv: lv.clients
    )
    for here, there in pairwise(curve):
        higher, p_value = _tps_higher(here.tps, there.tps, alpha=alpha)
        rule = None
        if not higher:
            rule = KneeRule.TPS_NOT_HIGHER
        elif _latency_outgrows_clients(here, there):
            rule = KneeRule.LATENCY_FASTER_THAN_CLIENTS
        if rule is not None:
            return Knee(
                clients=here.clients,
                tps=float(np.median(_positive(here.tps))),
                rule=rule,
                next_clients=there.clients,
                p_value=p_value,
            )
    return None


def _positive(values: Sequence[float]) -> list[float]:
    return [v for v in values if v > 0]


def _tps_higher(
    here: Sequence[float], there: Sequence[float], *, alpha: float
) -> tuple[bool, float | None]:
    """Whether `there` is significantly higher than `here`, and the test's p (None: no test)."""
    low, high = np.log(_positive(here)), np.log(_positive(there))
    if len(low) >= 2 and len(high) >= 2 and (np.ptp(low) > 0 or np.ptp(high) > 0):
        p_value = _welch_greater(high, low)
        if math.isfinite(p_value):
            return p_value < alpha, p_value
    # A single repeat has no variance, and identical repeats on both sides leave Welch's t
    # undefined (0/0): whether the next level is higher at all is all these repeats can say.
    return bool(np.median(high) > np.median(low)), None


def _welch_greater(high: np.ndarray, low: np.ndarray) -> float:
    """Welch's one-sided p that `high`'s mean is above `low`'s: what scipy.stats.ttest_ind
    (equal_var=False, alternative="greater") gives, through the t distribution's function
    itself (stdtr), without the 0.3 ms of checks around it that a knee paid up to eight times
    a curve (verdicts.py calls it so for the same reason). NaN where the t is undefined."""
    var_high = np.var(high, ddof=1) / len(high)
    var_low = np.var(low, ddof=1) / len(low)
    se2 = var_high + var_low
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (np.mean(high) - np.mean(low)) / np.sqrt(se2)
        dof = se2**2 / (var_high**2 / (len(high) - 1) + var_low**2 / (len(low) - 1))
    return float(stdtr(dof, -t))


def _latency_outgrows_clients(here: CurveLevel, there: CurveLevel) -> bool:
    mine = [v for v in here.latency_ms if v > 0]
    theirs = [v for v in there.latency_ms if v > 0]
    if not mine or not theirs:
        return False
    growth = float(np.median(theirs)) / float(np.median(mine))
    return growth > there.clients / here.clients
