"""Is a commit good or bad? A bisection step's verdict, with the comparison pages' statistics.
Pure code, no Django.

The change being looked for is the one between the good end and the bad end at one client
level: measured (their tps ratio, which must be established: its interval excludes 1) or given
(a ratio, such as 0.92 for "8% slower"). A step is placed on that change by its tps ratio to the
good end, on the log scale: 0 is the good end's tps, 1 the bad end's. The interval of that
position comes from the interval of the step's ratio (`stats.verdicts.ratio`, the pooled t
interval of the compare page, host noise included when given); the change's own size is taken
as known.

- the whole interval above one half: **bad** (the commit carries most of the change);
- the whole interval below one half: **good**;
- otherwise **unknown**: more repeats may tell, or the commit carries about half of it (two
  commits share the change).

One half is `git bisect`'s question asked of a number: does this commit have the change?
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from benchhub.stats.noise import HostNoise
from benchhub.stats.repeats import RunMean
from benchhub.stats.verdicts import Ratio, ratio

HALF = 0.5


class StepVerdict(StrEnum):
    GOOD = "good"
    BAD = "bad"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Change:
    """bad / good in tps, and its interval when it was measured."""

    value: float
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class StepDecision:
    """A step's verdict. `ratio` is step / good end in tps; `position` (0 the good end's
    tps, 1 the bad end's) with its interval `low`..`high`, None when the step's
    variation is unknown (one repeat a side and no host history)."""

    verdict: StepVerdict
    ratio: Ratio
    position: float
    low: float | None
    high: float | None
    reason: str


class ChangeError(ValueError):
    """There is no change to look for."""


def measured_change(
    good: Sequence[RunMean], bad: Sequence[RunMean], *, noise: HostNoise | None = None
) -> Change:
    """The change between the two ends. Raises ChangeError unless its interval excludes 1:
    a bisection of a change that is not established would chase noise."""
    change = ratio(good, bad, noise=noise)
    if change.low is None or change.high is None:
        raise ChangeError(
            "the two ends have one repeat each and the host no history: their difference has "
            "no interval; measure them again with more repeats"
        )
    if change.low <= 1 <= change.high:
        raise ChangeError(
            f"the bad end is {_percent(change.value)} of the good end, 95% interval "
            f"{_percent(change.low)} .. {_percent(change.high)}: the interval holds no change, "
            "so there is nothing to look for"
        )
    return Change(change.value, change.low, change.high)


def given_change(value: float) -> Change:
    """A change given by the person who asked, as bad / good in tps (0.92: 8% slower)."""
    if not (math.isfinite(value) and value > 0) or abs(math.log(value)) < 1e-3:
        raise ChangeError(f"a change must be a positive ratio other than 1, got {value!r}")
    return Change(value)


def step_verdict(
    good: Sequence[RunMean],
    step: Sequence[RunMean],
    *,
    change: Change,
    noise: HostNoise | None = None,
) -> StepDecision:
    """The verdict of one commit's repeats against the good end's, for `change`."""
    step_ratio = ratio(good, step, noise=noise)
    span = math.log(change.value)
    position = step_ratio.log_value / span
    if step_ratio.low is None or step_ratio.high is None:
        reason = "one repeat a side and no host history: no interval yet"
        return StepDecision(StepVerdict.UNKNOWN, step_ratio, position, None, None, reason)
    low, high = sorted((math.log(step_ratio.low) / span, math.log(step_ratio.high) / span))
    if low > HALF:
        verdict, reason = StepVerdict.BAD, "it carries the change: the whole interval is past half"
    elif high < HALF:
        verdict, reason = StepVerdict.GOOD, "it does not: the whole interval is short of half"
    else:
        verdict = StepVerdict.UNKNOWN
        reason = (
            f"its interval ({low:.2f} .. {high:.2f} of the change) holds one half: more repeats "
            "may tell, or the change is split between commits"
        )
    return StepDecision(verdict, step_ratio, position, low, high, reason)


def _percent(value: float) -> str:
    return f"{value * 100:.1f}%"
