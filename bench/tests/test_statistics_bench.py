"""The statistics benchmarks at a tiny size: their structure and the cases that cannot vary.
The figures themselves (1,000 trials) are in docs/statistics.md."""

from bench import coverage, detection
from benchhub.stats.verdicts import Verdict


def test_it_measures_coverage_for_every_configuration():
    rows = coverage.coverage_bench(trials=4, seed=3, jobs=1)
    assert [row.config for row in rows] == list(coverage.CONFIGS)
    for row in rows:
        assert row.trials == 4
        assert abs(sum(row.verdicts.values()) - 1) < 1e-9
        if row.config.repeats == 1 and not row.config.history:
            assert row.coverage is None and row.verdicts[Verdict.INCONCLUSIVE] == 1
        else:
            assert 0 <= row.coverage <= 1 and row.median_width > 0
    table = coverage.table(rows)
    assert table.count("\n") == len(rows) + 1
    names = [f.name for f in coverage.figures(rows)]
    assert "inconclusive, 1 repeat a side, no history" in names
    assert "coverage, 3 repeats a side" in names


def test_it_scores_detectors_on_steps_and_flat_series():
    result = detection.detection_bench(series=5, seed=2)
    assert set(result.scores) == set(detection.DETECTORS)
    ours = result.scores[detection.OURS]
    # A step of five times the noise is found at its place in every series.
    assert ours["step 5x noise"].hits == 5 and ours["step 5x noise"].misses == 0
    assert ours["flat"].points == 5 * detection.POINTS
    assert len(result.times_ms) == 6 * 5
    assert "false alarms per 1,000 points" in detection.table(result)


def test_it_calls_an_a_a_curve_different_only_when_a_level_or_the_mean_moved():
    from bench.aa import different
    from benchhub.stats.repeats import Repeat, RunMean
    from benchhub.stats.verdicts import curve_verdict, level_verdict

    def curve(other: list[float]):
        base = [Repeat(tps=RunMean(value=v)) for v in (100.0, 101.0, 99.0)]
        level = level_verdict(baseline=base, other=[Repeat(tps=RunMean(value=v)) for v in other])
        return curve_verdict(levels={1: level})

    assert not different(curve([100.5, 99.5, 100.0]))
    assert different(curve([120.0, 121.0, 119.0]))
