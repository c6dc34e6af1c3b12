import math

import numpy as np
import pytest
from scipy.stats import ttest_ind

from benchhub.compare.verdict_text import noise_sentence
from benchhub.stats.noise import HostNoise, detectable_difference, host_noise, repeats_needed


def test_it_pools_the_run_to_run_variation_of_log_tps_over_runs():
    runs = [[1000.0, 1020.0, 990.0], [2000.0, 1950.0], [500.0]]
    noise = host_noise(groups=runs)
    # Independently: the pooled variance of the logs around each run's own mean.
    squares = sum(((np.log(r) - np.log(r).mean()) ** 2).sum() for r in map(np.array, runs))
    assert noise is not None
    assert (noise.dof, noise.groups) == (3, 2)
    assert noise.cv == pytest.approx(math.sqrt(squares / 3))


def test_it_has_no_noise_estimate_without_a_run_of_two_repeats():
    assert host_noise(groups=[[1000.0], [1100.0]]) is None
    assert host_noise(groups=[]) is None


def test_it_refuses_values_that_are_not_positive():
    with pytest.raises(ValueError):
        host_noise(groups=[[1000.0, 0.0]])


def test_it_detects_the_detectable_difference_four_times_in_five():
    noise = HostNoise(cv=0.02, dof=1, groups=1)
    smallest = detectable_difference(noise=noise, repeats=3, pooled=False)
    rng = np.random.default_rng(1)
    base = rng.normal(0, 0.02, (4000, 3))
    other = rng.normal(math.log1p(smallest), 0.02, (4000, 3))
    detected = np.mean(ttest_ind(other, base, axis=1).pvalue < 0.05)
    assert detected == pytest.approx(0.8, abs=0.025)


def test_it_sees_smaller_differences_with_more_repeats_and_a_longer_history():
    noise = HostNoise(cv=0.015, dof=40, groups=20)
    by_repeats = [detectable_difference(noise=noise, repeats=n) for n in (1, 3, 5, 10)]
    assert by_repeats == sorted(by_repeats, reverse=True)
    assert detectable_difference(noise=noise, repeats=3) < detectable_difference(
        noise=noise, repeats=3, pooled=False
    )
    assert detectable_difference(noise=noise, repeats=1, pooled=False) == math.inf


def test_it_says_what_a_host_cannot_see():
    sentence = noise_sentence(noise=HostNoise(cv=0.015, dof=40, groups=20), repeats=3)
    assert sentence.startswith("On this host (run-to-run variation 1.5%), differences under ")
    assert sentence.endswith(" are not reliably visible with 3 repeats a side.")


def test_it_needs_fewer_repeats_for_a_clearer_answer():
    small, large = (
        repeats_needed(log_ratio=math.log(r), cv=0.02, threshold=0.02) for r in (1.04, 1.08)
    )
    assert small is not None and large is not None and large < small
    # A difference of exactly 0 settles as "the same" once the interval fits inside +-2%.
    assert repeats_needed(log_ratio=0.0, cv=0.02, threshold=0.02) is not None
    # On the threshold itself neither answer comes soon.
    assert repeats_needed(log_ratio=math.log(1.02), cv=0.02, threshold=0.02, limit=10) is None


def test_it_finds_the_fewest_repeats_that_settle_as_a_scan_would():
    from benchhub.stats.noise import _same_chance, power

    def scanned(log_ratio: float, cv: float) -> int | None:
        for n in range(2, 101):
            dof = 2 * n - 2
            if (
                power(log_difference=log_ratio, cv=cv, repeats=n, dof=dof) >= 0.8
                or _same_chance(log_ratio, cv, 0.02, n, dof) >= 0.8
            ):
                return n
        return None

    for ratio, cv in [(1.03, 0.02), (1.0, 0.01), (1.05, 0.03), (0.97, 0.015), (1.015, 0.01)]:
        assert repeats_needed(log_ratio=math.log(ratio), cv=cv, threshold=0.02) == scanned(
            math.log(ratio), cv
        )
