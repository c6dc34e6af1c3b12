"""Paired verdicts: repeats measured side by side in one job are compared pair by pair."""

import math

import numpy as np
import pytest
from scipy.stats import ttest_rel

from benchhub.compare.verdict_text import level_description
from benchhub.stats.noise import repeats_needed
from benchhub.stats.repeats import Repeat, RunMean
from benchhub.stats.verdicts import Unit, Verdict, level_verdict, paired_ratio, repeat_pairs

# A shared host: from one repeat to the next its speed moves by up to a fifth, alike for both
# versions measured at that repeat.
DRIFT = [1.0, 1.18, 0.86, 1.07, 0.93, 1.12, 0.95, 1.03]


def side(tps: list[float], *, run: int, pairs: list | None = None, within_se=0.0) -> list[Repeat]:
    keys = pairs if pairs is not None else list(range(len(tps)))
    return [
        Repeat(tps=RunMean(value=v, within_se=within_se * v), run=run, pair=key)
        for v, key in zip(tps, keys, strict=True)
    ]


def drifting(gain: float, *, seed: int = 0, count: int = 6) -> tuple[list[float], list[float]]:
    """Both versions' tps at each repeat: the host's drift, then 0.5% of noise of their own."""
    rng = np.random.default_rng(seed)
    drift = DRIFT[:count]
    base = [1000 * d * math.exp(rng.normal(0, 0.005)) for d in drift]
    other = [1000 * gain * d * math.exp(rng.normal(0, 0.005)) for d in drift]
    return base, other


def test_it_decides_a_gain_that_the_hosts_drift_hides_from_the_unpaired_interval():
    base, other = drifting(1.06)
    paired = level_verdict(baseline=side(base, run=1), other=side(other, run=2), threshold=0.02)
    unpaired = level_verdict(
        baseline=side(base, run=1, pairs=[None] * 6),
        other=side(other, run=2, pairs=[None] * 6),
        threshold=0.02,
    )

    assert paired.tps.unit is Unit.PAIRS and unpaired.tps.unit is Unit.REPEATS
    assert paired.tps.value == pytest.approx(unpaired.tps.value)
    assert paired.verdict is Verdict.FASTER and 1.04 < paired.tps.low < 1.06 < paired.tps.high
    assert unpaired.verdict is Verdict.INCONCLUSIVE
    assert paired.tps.high - paired.tps.low < (unpaired.tps.high - unpaired.tps.low) / 10
    assert "Paired" in level_description(paired)


def test_it_calls_an_unchanged_version_the_same_through_the_drift():
    base, other = drifting(1.0, seed=3)
    verdict = level_verdict(baseline=side(base, run=1), other=side(other, run=2), threshold=0.02)
    assert verdict.verdict is Verdict.SAME


def test_it_computes_the_paired_interval_as_students_paired_t_test_on_log_tps():
    base, other = [1000.0, 1180.0, 870.0, 1060.0], [1050.0, 1230.0, 925.0, 1100.0]
    verdict = level_verdict(baseline=side(base, run=1), other=side(other, run=2))
    test = ttest_rel(np.log(other), np.log(base))
    low, high = test.confidence_interval(0.95)

    assert verdict.tps.value == pytest.approx(math.exp(np.mean(np.log(other) - np.log(base))))
    assert (verdict.tps.low, verdict.tps.high) == pytest.approx((math.exp(low), math.exp(high)))
    assert verdict.p_difference == pytest.approx(test.pvalue)
    assert verdict.tps.dof == 3


def test_it_pairs_by_the_moment_measured_not_by_the_order_given():
    base, other = drifting(1.06)
    shuffled = [5, 2, 0, 4, 1, 3]
    verdict = level_verdict(
        baseline=side(base, run=1),
        other=side([other[i] for i in shuffled], run=2, pairs=shuffled),
        threshold=0.02,
    )
    assert verdict.tps.unit is Unit.PAIRS and verdict.verdict is Verdict.FASTER


@pytest.mark.parametrize(
    "base_pairs, other_pairs, base_runs, other_runs",
    [
        ([0, 1, 2, 3], [0, 1, 2, None], [1] * 4, [2] * 4),  # one repeat not known to be beside
        ([0, 1, 2, 3], [0, 1, 2, 7], [1] * 4, [2] * 4),  # one partner missing
        ([0, 1, 2, 2], [0, 1, 2, 3], [1] * 4, [2] * 4),  # two repeats claim one moment
        ([0, 1, 2, 3], [0, 1, 2, 3], [1, 1, 3, 3], [2, 2, 4, 4]),  # two jobs a side
    ],
)
def test_it_falls_back_to_the_unpaired_interval_unless_every_repeat_has_its_partner(
    base_pairs, other_pairs, base_runs, other_runs
):
    base = [
        Repeat(tps=RunMean(v), run=r, pair=p)
        for v, r, p in zip([1000.0, 1180.0, 870.0, 1060.0], base_runs, base_pairs, strict=True)
    ]
    other = [
        Repeat(tps=RunMean(v), run=r, pair=p)
        for v, r, p in zip([1050.0, 1230.0, 925.0, 1100.0], other_runs, other_pairs, strict=True)
    ]
    assert repeat_pairs(base, other) is None
    verdict = level_verdict(baseline=base, other=other)
    assert verdict.tps.unit is not Unit.PAIRS and not verdict.tps.paired


def test_it_does_not_let_pairs_agree_better_than_their_seconds_are_measured():
    base, other = [1000.0, 1000.0, 1000.0], [1100.0, 1100.0, 1100.0]
    verdict = paired_ratio(
        [RunMean(v, within_se=10.0) for v in base], [RunMean(v, within_se=11.0) for v in other]
    )
    # Each pair's log ratio has a variance of 0.01**2 + 0.01**2 from the two repeats' seconds.
    assert verdict.log_se == pytest.approx(math.sqrt(2e-4 / 3))
    assert verdict.cv == pytest.approx(0.01) and verdict.within_cv == pytest.approx(0.01)


def test_it_rarely_calls_a_version_against_itself_different_through_the_drift():
    rng = np.random.default_rng(7)
    called = 0
    trials = 400
    for _ in range(trials):
        drift = np.exp(rng.normal(0, 0.15, 5))
        base = list(1000 * drift * np.exp(rng.normal(0, 0.01, 5)))
        other = list(1000 * drift * np.exp(rng.normal(0, 0.01, 5)))
        verdict = level_verdict(baseline=side(base, run=1), other=side(other, run=2))
        called += verdict.verdict in (Verdict.FASTER, Verdict.SLOWER)
    assert called / trials < 0.09


def test_it_asks_for_more_pairs_than_pooled_repeats_for_the_fewer_degrees_of_freedom():
    pooled = repeats_needed(log_ratio=math.log(1.03), cv=0.02, threshold=0.05)
    paired = repeats_needed(log_ratio=math.log(1.03), cv=0.02, threshold=0.05, paired=True)
    assert pooled is not None and paired is not None and paired > pooled
