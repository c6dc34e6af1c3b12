"""The two-level coverage simulation (bench.two_level) at its full size: it is fast (1,000
comparisons in about a second), so the figure docs/statistics.md reports is checked here."""

from bench import two_level


def test_it_covers_the_truth_when_runs_vary_between_jobs():
    found = two_level.simulate(trials=1000, seed=1, shape=two_level.Shape(runs=3, repeats=3))
    assert found.covered >= 930
    # Repeats as independent units cannot see the variation between runs.
    assert found.old_covered < 800


def test_it_covers_the_truth_with_two_runs_a_side():
    found = two_level.simulate(trials=1000, seed=2, shape=two_level.Shape(runs=2, repeats=3))
    assert found.covered >= 930


def test_it_reports_an_exact_interval_of_the_coverage():
    low, high = two_level.Coverage.interval(950, 1000)
    assert low < 0.95 < high and high - low < 0.03
