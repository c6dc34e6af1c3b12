import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchhub.stats.repeats import (
    MIN_SECONDS,
    RunMean,
    repeat,
    run_mean,
    steady_state,
    steady_window,
)


def ar1(seed: int, *, n: int, phi: float, sd: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = np.empty(n)
    values[0] = rng.normal(0, sd)
    for i in range(1, n):
        values[i] = phi * values[i - 1] + rng.normal(0, sd * np.sqrt(1 - phi**2))
    return values


def test_it_takes_the_mean_of_the_steady_state_seconds_over_pgbench_overall_figure():
    seconds = [1000.0, 1010.0, 990.0, 1005.0, 995.0] * 4
    measured = run_mean(overall=900.0, samples=seconds)
    assert measured.value == pytest.approx(1000.0)
    assert measured.seconds == 20
    assert measured.within_se > 0


def test_it_falls_back_to_pgbench_overall_figure_with_too_few_seconds():
    measured = run_mean(overall=900.0, samples=[1000.0] * (MIN_SECONDS - 1))
    assert measured == RunMean(value=900.0)


def test_it_finds_correlated_seconds_pin_the_mean_down_less_than_independent_ones():
    # Same marginal spread (40 tps); neighbouring seconds alike (AR(1), phi 0.7) carry less
    # information: the mean's standard error is sqrt((1 + phi) / (1 - phi)) = 2.4 times that
    # of independent seconds. A block bootstrap of 120 seconds recovers most of it.
    def average(phi: float) -> tuple[float, float]:
        made = [
            run_mean(overall=None, samples=1000 + ar1(s, n=120, phi=phi, sd=40)) for s in range(10)
        ]
        return float(np.mean([m.within_se for m in made])), float(np.mean([m.block for m in made]))

    independent, independent_block = average(0.0)
    correlated, correlated_block = average(0.7)
    expected = 40 / np.sqrt(120)
    assert correlated_block > independent_block
    assert independent == pytest.approx(expected, rel=0.15)
    assert 0.6 * 2.4 * expected < correlated < 1.1 * 2.4 * expected


def test_it_is_deterministic_for_a_seed():
    seconds = 1000 + ar1(2, n=60, phi=0.7, sd=30)
    assert run_mean(overall=None, samples=seconds, seed=5) == run_mean(
        overall=None, samples=seconds, seed=5
    )
    assert run_mean(overall=None, samples=seconds, seed=5) != run_mean(
        overall=None, samples=seconds, seed=6
    )


def test_it_has_no_within_run_noise_for_constant_seconds():
    assert run_mean(overall=None, samples=[500.0] * 30).within_se == 0


@pytest.mark.parametrize(
    ("overall", "samples"),
    [(0.0, []), (-5.0, []), (None, []), (float("nan"), []), (None, [1.0, float("inf")] * 10)],
)
def test_it_refuses_values_it_cannot_take_a_log_ratio_of(overall, samples):
    with pytest.raises(ValueError):
        run_mean(overall=overall, samples=samples)


def test_it_keeps_latency_only_when_pgbench_reported_it():
    without = repeat(tps=1000.0)
    with_latency = repeat(tps=1000.0, latency_ms=2.5)
    assert without.latency is None
    assert with_latency.latency == RunMean(value=2.5)


@settings(max_examples=300, deadline=None)
@given(
    seconds=st.lists(
        st.one_of(st.none(), st.floats(min_value=0, max_value=1e6)), min_size=0, max_size=80
    ),
    start=st.floats(min_value=0.5, max_value=5),
    duration=st.one_of(st.none(), st.floats(min_value=1, max_value=200)),
)
def test_the_steady_window_of_arrays_is_the_steady_state_of_the_samples(seconds, start, duration):
    t = [start + i for i in range(len(seconds))]
    window = steady_window(t, seconds, duration_s=duration)
    expected = steady_state(list(zip(t, seconds, strict=True)), duration_s=duration)
    assert [float(v) for v in window] == expected
