import math

import numpy as np
import pytest

from benchhub.bisections.decide import (
    ChangeError,
    StepVerdict,
    given_change,
    measured_change,
    step_verdict,
)
from benchhub.stats.noise import HostNoise
from benchhub.stats.repeats import RunMean


def repeats(tps: float, *, count: int = 5, cv: float = 0.01, seed: int = 0) -> list[RunMean]:
    rng = np.random.default_rng(seed)
    return [RunMean(value=tps * math.exp(rng.normal(0, cv))) for _ in range(count)]


GOOD = repeats(1000, seed=1)
BAD = repeats(900, seed=2)


def test_it_measures_the_change_between_the_two_ends():
    change = measured_change(GOOD, BAD)
    assert change.value == pytest.approx(0.9, abs=0.02)
    assert change.high < 1


def test_it_refuses_a_change_that_is_noise():
    with pytest.raises(ChangeError, match="nothing to look for"):
        measured_change(repeats(1000, seed=1, cv=0.05), repeats(995, seed=2, cv=0.05))
    with pytest.raises(ChangeError, match="no interval"):
        measured_change(GOOD[:1], BAD[:1])


@pytest.mark.parametrize(
    ("tps", "expected"),
    [
        (1000, StepVerdict.GOOD),
        (990, StepVerdict.GOOD),
        (900, StepVerdict.BAD),
        (910, StepVerdict.BAD),
    ],
)
def test_it_calls_a_step_by_the_side_of_the_change_it_is_on(tps, expected):
    change = measured_change(GOOD, BAD)
    decision = step_verdict(GOOD, repeats(tps, seed=3), change=change)
    assert decision.verdict is expected
    assert decision.low <= decision.position <= decision.high


def test_a_step_half_way_is_unknown():
    change = measured_change(GOOD, BAD)
    decision = step_verdict(GOOD, repeats(948.7, seed=4), change=change)
    assert decision.verdict is StepVerdict.UNKNOWN
    assert decision.low < 0.5 < decision.high
    assert "holds one half" in decision.reason


def test_more_repeats_settle_a_noisy_step():
    change = given_change(0.9)
    noisy = dict(cv=0.03)
    few = step_verdict(
        repeats(1000, count=2, seed=5, **noisy),
        repeats(905, count=2, seed=6, **noisy),
        change=change,
    )
    many = step_verdict(
        repeats(1000, count=12, seed=5, **noisy),
        repeats(905, count=12, seed=6, **noisy),
        change=change,
    )
    assert few.verdict is StepVerdict.UNKNOWN
    assert many.verdict is StepVerdict.BAD


def test_an_improvement_is_bisected_the_same_way():
    change = given_change(1.2)
    assert step_verdict(GOOD, repeats(1200, seed=7), change=change).verdict is StepVerdict.BAD
    assert step_verdict(GOOD, repeats(1002, seed=8), change=change).verdict is StepVerdict.GOOD


def test_one_repeat_a_side_needs_the_host_history():
    change = given_change(0.9)
    alone = step_verdict(GOOD[:1], [RunMean(900)], change=change)
    assert alone.verdict is StepVerdict.UNKNOWN and alone.low is None
    noise = HostNoise(cv=0.01, dof=20, groups=5)
    with_history = step_verdict(GOOD[:1], [RunMean(890)], change=change, noise=noise)
    assert with_history.verdict is StepVerdict.BAD


@pytest.mark.parametrize("value", [1.0, 0, -0.5, float("nan"), float("inf")])
def test_it_refuses_a_given_change_that_is_none(value):
    with pytest.raises(ChangeError):
        given_change(value)
