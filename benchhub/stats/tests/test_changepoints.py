import numpy as np
import pytest

from benchhub.stats.changepoints import change_points, series_noise, window_p_value


def series(seed: int, *, points: int, step_at: int | None = None, step: float = 0.0) -> list[float]:
    """Run results around 1000 tps with 1% noise, stepping by `step` (0.1 = +10%)."""
    values = 1000 * (1 + 0.01 * np.random.default_rng(seed).standard_normal(points))
    if step_at is not None:
        values[step_at:] *= 1 + step
    return [float(v) for v in values]


def test_it_finds_a_step_at_the_right_index():
    found = change_points(values=series(1, points=100, step_at=60, step=-0.1))
    assert len(found) == 1
    point = found[0]
    assert point.index == 60
    assert point.before == pytest.approx(1000, rel=0.01)
    assert point.after == pytest.approx(900, rel=0.01)
    assert point.change == pytest.approx(-0.1, abs=0.01)
    assert point.p_value < 1e-6


def test_it_finds_nothing_in_a_flat_series():
    assert change_points(values=series(2, points=200)) == []


def test_it_looks_at_the_recent_values_only_and_counts_indexes_in_the_whole_series():
    values = series(3, points=500, step_at=100, step=0.2)
    values[450:] = [v * 0.9 for v in values[450:]]
    found = change_points(values=values, recent=200)
    assert [p.index for p in found] == [450]


def test_it_drops_changes_smaller_than_asked():
    values = series(4, points=120, step_at=60, step=0.05)
    assert [p.index for p in change_points(values=values)] == [60]
    assert change_points(values=values, min_change=0.1) == []


def test_it_needs_a_few_values_and_finite_ones():
    assert change_points(values=[1000.0, 2000.0]) == []
    with pytest.raises(ValueError):
        change_points(values=[1000.0] * 10 + [float("nan")])
    with pytest.raises(ValueError):
        change_points(values=[1000.0] * 10, recent=3)


def test_it_waits_for_three_runs_before_calling_the_newest_a_level():
    values = series(5, points=60)
    dipped = [*values[:-1], values[-1] * 0.7]
    assert [p.index for p in change_points(values=dipped, min_runs=1, outlier_noises=0)] == [59]
    # A checkpoint's dip in the newest run, or in the two newest, is no level yet.
    assert change_points(values=dipped) == []
    assert change_points(values=[*values[:-2], values[-2] * 0.7, values[-1] * 0.7]) == []
    # Three runs that agree are.
    three = [*values[:-3], *(v * 0.7 for v in values[-3:])]
    assert [p.index for p in change_points(values=three)] == [57]


def test_it_sees_a_small_step_through_dips_that_swell_the_t_tests_variance():
    values = series(6, points=100, step_at=50, step=-0.03)
    for i, dip in ((12, 0.7), (30, 0.75), (44, 0.8), (66, 0.7), (81, 0.72)):
        values[i] *= dip
    assert change_points(values=values, outlier_noises=0) == []
    (found,) = change_points(values=values)
    # At 3 times the noise a step's place is known to a run.
    assert abs(found.index - 50) <= 1 and found.change < 0


def test_it_measures_a_series_noise_through_a_step_and_a_dip():
    values = series(7, points=200, step_at=100, step=-0.2)
    values[40] *= 0.6
    assert series_noise(values) == pytest.approx(0.01, rel=0.15)
    assert series_noise([1.0, 0.0, 1.0]) == 0.0


def test_it_bears_out_a_step_from_its_neighbourhood_and_not_a_place_inside_a_level():
    rng = np.random.default_rng(5)
    values = np.concatenate([rng.normal(1000, 10, 40), rng.normal(900, 10, 40)])
    assert window_p_value(values, 40) < 0.001
    assert window_p_value(values, 20) > 0.1
    # The step 30 runs before is outside the windows of 10 runs.
    assert window_p_value(values, 70) > 0.1


def test_it_tests_the_windows_as_far_as_the_values_go():
    values = [100.0, 101.0, 102.0, 90.0, 91.0, 92.0]
    # Three lower against three higher: the smallest two-sided p of the exact test, 0.1.
    assert window_p_value(values, 3) == pytest.approx(0.1)
    assert window_p_value(values, 1) == 1.0
    assert window_p_value(values, 5) == 1.0
