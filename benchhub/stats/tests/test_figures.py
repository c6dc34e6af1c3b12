import math

import pytest

from benchhub.stats.figures import (
    change_pct,
    geometric_mean_ratio,
    peak,
)


def test_it_gives_the_change_in_percent_of_the_baseline():
    assert change_pct(1000.0, 1100.0) == pytest.approx(10.0)
    assert change_pct(1000.0, 900.0) == pytest.approx(-10.0)


def test_it_has_no_change_without_both_numbers_or_with_a_zero_baseline():
    assert change_pct(None, 5.0) is None
    assert change_pct(5.0, None) is None
    assert change_pct(0.0, 5.0) is None


def test_it_takes_the_geometric_mean_over_the_shared_levels_only():
    baseline = {1: 100.0, 2: 200.0, 4: 400.0}
    other = {1: 200.0, 2: 100.0, 8: 999.0}
    # ratios 2 and 0.5 at 1 and 2 clients; 4 and 8 are not shared
    assert geometric_mean_ratio(baseline, other) == pytest.approx(1.0)
    assert geometric_mean_ratio({1: 100.0}, {1: 150.0}) == pytest.approx(1.5)
    assert geometric_mean_ratio({1: 100.0, 2: 100.0}, {1: 200.0, 2: 800.0}) == pytest.approx(
        math.sqrt(2 * 8)
    )


def test_it_has_no_geometric_mean_without_shared_positive_levels():
    assert geometric_mean_ratio({1: 100.0}, {2: 100.0}) is None
    assert geometric_mean_ratio({1: 0.0}, {1: 100.0}) is None
    assert geometric_mean_ratio({1: None}, {1: 100.0}) is None


def test_it_finds_the_peak_and_its_clients():
    assert peak({1: 100.0, 8: 900.0, 16: 850.0, 4: 400.0}) == (900.0, 8)
    assert peak({2: 5.0, 1: 5.0}) == (5.0, 1)
    assert peak({1: None}) is None
    assert peak({}) is None
