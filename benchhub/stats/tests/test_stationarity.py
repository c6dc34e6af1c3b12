"""The check of one repeat's per-second progress for a trend or a level shift inside the run."""

import numpy as np
import pytest

from bench.stationarity import seconds
from benchhub.stats.stationarity import MIN_SECONDS, repeat_unsteadiness, unsteadiness

LENGTH = 300


def _check(values: np.ndarray):
    return unsteadiness(t=list(range(1, values.size + 1)), tps=[float(v) for v in values])


def test_it_finds_a_run_that_loses_fifteen_percent_in_a_straight_line():
    rng = np.random.default_rng(3)
    found = _check(seconds(rng, LENGTH, sd=0.03, phi=0.7, dips=True, loss=0.15))
    assert found is not None and found.kind == "trend"
    assert found.change == pytest.approx(-0.15, abs=0.05)
    assert found.reason().startswith("tps fell")


def test_it_finds_a_level_shift_and_when_it_happened():
    rng = np.random.default_rng(4)
    values = seconds(rng, LENGTH, sd=0.02, phi=0.5, dips=False)
    values[170:] *= 0.85
    found = _check(values)
    assert found is not None and found.kind == "shift"
    assert found.change == pytest.approx(-0.15, abs=0.03)
    assert found.at_s == pytest.approx(171, abs=20)


def test_it_leaves_steady_runs_alone_checkpoints_and_correlated_seconds_included():
    rng = np.random.default_rng(5)
    flagged = sum(
        _check(seconds(rng, LENGTH, sd=0.03, phi=0.7, dips=True)) is not None for _ in range(100)
    )
    assert flagged <= 5


def test_it_does_not_check_a_run_too_short_to_tell():
    rng = np.random.default_rng(6)
    values = seconds(rng, MIN_SECONDS - 1, sd=0.01, phi=0.0, dips=False, loss=0.5)
    assert _check(values) is None


def test_it_leaves_the_warm_up_out():
    # A climb over the first 10% of the run (the warm-up the mean leaves out), flat after it.
    rng = np.random.default_rng(7)
    values = seconds(rng, LENGTH, sd=0.01, phi=0.3, dips=False)
    values[:30] *= np.linspace(0.3, 1.0, 30)
    samples = [(float(t), float(v)) for t, v in enumerate(values, 1)]
    assert repeat_unsteadiness(samples, duration_s=float(LENGTH)) is None
    # The same run losing a fifth after its warm-up is flagged.
    values[30:] *= np.linspace(1.0, 0.8, LENGTH - 30)
    samples = [(float(t), float(v)) for t, v in enumerate(values, 1)]
    found = repeat_unsteadiness(samples, duration_s=float(LENGTH))
    assert found is not None and found.change == pytest.approx(-0.2, abs=0.05)
