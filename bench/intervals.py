"""95% intervals for the bench's figures, from repeated, interleaved measurements, and the
verdict on a target that reads the whole interval (docs/performance.md, "Method").

- A ratio of the bench to its floor (upload against COPY, agent against bare pgbench) is the
  ratio of geometric means with a pooled Student's t interval on the logs: exactly what the
  comparison pages compute for two versions (`benchhub.stats.verdicts.ratio`), each
  measurement a repeat without per-second samples. Over several client levels, the geometric
  mean of the level ratios with its interval is the compare page's curve figure
  (`curve_verdict`).
- A latency percentile (p95, p50) gets a bootstrap interval (scipy.stats.bootstrap, BCa) over
  the rounds: whole rounds are resampled and the percentile taken over their pooled requests,
  since requests of one round share the machine's load of that moment and are not independent.
  With fewer than two rounds, over the requests.
- A rate or any other positive figure measured once per round is the geometric mean of the
  rounds with Student's t on the logs (scipy.stats.ttest_1samp); a figure that can be zero (CPU
  share) the arithmetic mean with Student's t.

A target is met only when the whole interval is on its right side, missed when the whole
interval is on the wrong side, and undecided when the interval straddles it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
from scipy import stats

from benchhub.stats.repeats import Repeat, RunMean
from benchhub.stats.verdicts import curve_verdict, level_verdict, ratio

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 17  # the same figures give the same interval on every run


@dataclass(frozen=True)
class Interval:
    """A figure and its 95% interval (`low`/`high` None when the data cannot give one: a
    single round); `method` says how it was computed, in words for the note."""

    value: float
    low: float | None
    high: float | None
    method: str


class Verdict(StrEnum):
    MET = "met"
    MISSED = "MISSED"
    UNDECIDED = "undecided"


def verdict(
    *,
    low: float,
    high: float,
    op: str,
    target: float,
    target_high: float | None = None,
) -> Verdict:
    """Whether the interval [low, high] meets the target: "<=" and ">=" against `target`,
    "within" the band [target, target_high]. Met when the whole interval is on the right side,
    missed when the whole interval is on the wrong side, undecided otherwise."""
    if low > high:
        raise ValueError(f"interval low {low!r} above high {high!r}")
    if op == "<=":
        right, wrong = high <= target, low > target
    elif op == ">=":
        right, wrong = low >= target, high < target
    elif op == "within":
        if target_high is None or target_high < target:
            raise ValueError("a 'within' target needs target <= target_high")
        right = target <= low and high <= target_high
        wrong = high < target or low > target_high
    else:
        raise ValueError(f"unknown target operator {op!r}")
    if right:
        return Verdict.MET
    return Verdict.MISSED if wrong else Verdict.UNDECIDED


def ratio_interval(*, floor: Sequence[float], bench: Sequence[float]) -> Interval:
    """bench / floor as the ratio of geometric means, with the compare pages' pooled Student's
    t interval on the logs (one measurement per round and side, taken in ABAB order). No
    interval with a single round a side. Units: whatever both share (ms, uploads/s, tps).

    Raises ValueError for an empty side or a value that is not a positive number."""
    result = ratio([RunMean(value=v) for v in floor], [RunMean(value=v) for v in bench])
    words = (
        f"ratio of geometric means over {len(bench)} rounds, ABAB, "
        "pooled Student's t on the logs (as the compare pages)"
    )
    return Interval(result.value, result.low, result.high, words)


def curve_interval(*, levels: Mapping[int, tuple[Sequence[float], Sequence[float]]]) -> Interval:
    """Over client levels: `levels` maps clients to (floor values, bench values), one a round.
    The geometric mean of the level ratios and its interval, as the compare page's whole-curve
    figure (per level the pooled t interval, over levels Welch-Satterthwaite)."""
    verdicts = {
        clients: level_verdict(
            baseline=[Repeat(tps=RunMean(value=v)) for v in floor],
            other=[Repeat(tps=RunMean(value=v)) for v in bench],
        )
        for clients, (floor, bench) in levels.items()
    }
    curve = curve_verdict(levels=verdicts)
    if curve.geomean is None:
        raise ValueError("no level to compare")
    rounds = min(len(bench) for _, bench in levels.values())
    words = (
        f"geometric mean over {len(levels)} levels of the ratios of geometric means, "
        f"{rounds} ABAB rounds; the compare page's curve interval"
    )
    return Interval(curve.geomean, curve.low, curve.high, words)


def percentile_interval(*, rounds: Sequence[Sequence[float] | np.ndarray], q: float) -> Interval:
    """The q-th percentile (0..100) of all requests of all rounds, and its bootstrap (BCa)
    interval from resampling whole rounds (over requests when there is one round). Units: the
    requests' (ms).

    Raises ValueError without any request."""
    groups = [np.asarray(r, dtype=float) for r in rounds if len(r)]
    if not groups:
        raise ValueError("no request to take a percentile of")
    pooled = np.concatenate(groups)
    value = float(np.percentile(pooled, q))
    statistic: Callable[..., Any]
    if len(groups) >= 2:

        def of_rounds(picked: np.ndarray) -> float:
            return float(np.percentile(np.concatenate([groups[i] for i in picked]), q))

        data: tuple[np.ndarray, ...] = (np.arange(len(groups)),)
        statistic, vectorized = of_rounds, False
        words = f"bootstrap (BCa) over {len(groups)} rounds of {len(pooled)} requests"
    else:

        def of_requests(sample: np.ndarray, axis: int = -1) -> np.ndarray:
            return np.percentile(sample, q, axis=axis)

        data, statistic, vectorized = (pooled,), of_requests, True
        words = f"bootstrap (BCa) over {len(pooled)} requests of one round"
    low, high = _bootstrap(data, statistic, vectorized=vectorized)
    return Interval(value, low, high, words)


def _bootstrap(data, statistic, *, vectorized: bool) -> tuple[float | None, float | None]:
    if len(np.unique(np.concatenate([np.asarray(d, dtype=float) for d in data]))) < 2:
        return None, None
    with warnings.catch_warnings():
        # A degenerate resample distribution (every round alike) gives NaN with a warning;
        # it is reported as no interval.
        warnings.simplefilter("ignore")
        result = stats.bootstrap(
            data,
            statistic,
            vectorized=vectorized,
            n_resamples=BOOTSTRAP_RESAMPLES,
            confidence_level=CONFIDENCE,
            method="BCa",
            random_state=np.random.default_rng(BOOTSTRAP_SEED),
        )
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    if not (math.isfinite(low) and math.isfinite(high)):
        return None, None
    return low, high


def mean_interval(
    *, values: Sequence[float], geometric: bool = True, minimum: float | None = None
) -> Interval:
    """The mean of one measurement per round and its Student's t interval: geometric (t on the
    logs) for positive figures such as rates, arithmetic for figures that can be zero. No
    interval from one value. `minimum` (arithmetic only) is the least value the figure can
    take (0 for a CPU share): the interval is cut there. Units: the values'.

    Raises ValueError without values, or with a value <= 0 when geometric."""
    array = np.asarray(values, dtype=float)
    if not array.size:
        raise ValueError("no value to average")
    if geometric and np.any(array <= 0):
        raise ValueError("a geometric mean needs positive values")
    sample = np.log(array) if geometric else array
    centre = float(sample.mean())
    low = high = None
    if array.size >= 2:
        if np.ptp(sample) == 0:
            low = high = centre
        else:
            found = stats.ttest_1samp(sample, 0.0).confidence_interval(CONFIDENCE)
            low, high = float(found.low), float(found.high)
    if minimum is not None and not geometric and low is not None and high is not None:
        low, high = max(low, minimum), max(high, minimum)
    if geometric:
        centre = math.exp(centre)
        low = None if low is None else math.exp(low)
        high = None if high is None else math.exp(high)
    kind = "geometric mean, Student's t on the logs" if geometric else "mean, Student's t"
    return Interval(centre, low, high, f"{kind} over {array.size} rounds")
