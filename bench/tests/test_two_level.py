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


def test_it_calls_a_version_against_itself_different_over_a_curve_at_most_one_time_in_twenty():
    # A run's effect is shared by all its levels: the harshest case for a geometric mean whose
    # interval treated the levels as independent, which the former rule shows.
    found = two_level.curve_aa(trials=1000, seed=1, runs=3)
    # The rate's whole 95% interval lies under 5%.
    assert two_level.Coverage.interval(found.called, found.trials)[1] < 0.05
    assert found.old_called >= 200
