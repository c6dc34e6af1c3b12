import numpy as np
import pytest

from benchhub.stats.drift import drift


def daily(seed: int, *, days: int = 100, per_week: float = 0.0, noise: float = 0.01) -> list[float]:
    """A run a day around 1000 tps with log-normal noise, changing by `per_week` a week."""
    rng = np.random.default_rng(seed)
    level = 1000 * (1 + per_week) ** (np.arange(days) / 7)
    return [float(v) for v in level * np.exp(rng.normal(0, noise, days))]


def test_it_flags_half_a_percent_lost_a_week_with_its_rate():
    found = drift(values=daily(1, per_week=-0.005))
    assert found is not None and found.runs == 84
    assert found.per_week == pytest.approx(-0.005, abs=0.0015)
    assert found.low < found.per_week < found.high < 0
    assert found.p_value < 1e-3


def test_it_leaves_a_flat_series_and_a_step_alone():
    assert drift(values=daily(2)) is None
    stepped = daily(3)
    stepped[60:] = [v * 0.9 for v in stepped[60:]]
    # The window trends across the step, its halves do not: a step detector's business.
    assert drift(values=stepped) is None


def test_it_needs_enough_positive_values():
    assert drift(values=daily(4, days=20, per_week=-0.05)) is None
    assert drift(values=[*daily(5, days=83, per_week=-0.01), 0.0]) is None
