import math

import numpy as np
import pytest
from scipy.stats import mannwhitneyu, ttest_ind

from benchhub.compare.verdict_text import curve_summary, level_description
from benchhub.stats.noise import HostNoise
from benchhub.stats.repeats import Repeat, RunMean, repeat
from benchhub.stats.verdicts import (
    History,
    LevelVerdict,
    Verdict,
    curve_verdict,
    level_verdict,
    level_verdicts,
    rank_tests,
)


def runs(*tps: float, within_se: float = 0.0, latency_ms: float | None = None) -> list[Repeat]:
    latency = RunMean(value=latency_ms) if latency_ms else None
    return [Repeat(tps=RunMean(value=v, within_se=within_se), latency=latency) for v in tps]


def simulated(seed: int, *, tps: float, count: int, run_cv: float = 0.02) -> list[Repeat]:
    """Repeats of 60 steady-state seconds: a run-to-run effect, then AR(1) seconds."""
    rng = np.random.default_rng(seed)
    made = []
    for i in range(count):
        level = tps * math.exp(rng.normal(0, run_cv))
        seconds = np.empty(60)
        seconds[0] = rng.normal(0, 0.03)
        for s in range(1, 60):
            seconds[s] = 0.7 * seconds[s - 1] + rng.normal(0, 0.03 * math.sqrt(1 - 0.49))
        samples = level * (1 + seconds)
        made.append(repeat(tps=float(samples.mean()), tps_samples=samples, seed=seed * 10 + i))
    return made


def test_it_calls_a_clear_ten_percent_gain_over_five_repeats_faster():
    verdict = level_verdict(
        baseline=simulated(1, tps=1000, count=5), other=simulated(2, tps=1100, count=5)
    )
    assert verdict.verdict is Verdict.FASTER
    assert verdict.tps.low > 1.0 and verdict.tps.low < 1.10 < verdict.tps.high
    assert "Faster" in level_description(verdict)


def test_it_calls_a_clear_ten_percent_loss_over_five_repeats_slower():
    verdict = level_verdict(
        baseline=simulated(3, tps=1000, count=5), other=simulated(4, tps=900, count=5)
    )
    assert verdict.verdict is Verdict.SLOWER
    assert verdict.tps.high < 1.0


def test_it_computes_the_interval_as_a_pooled_t_test_on_log_tps():
    base, other = [1000.0, 1030.0, 985.0, 1010.0], [1080.0, 1050.0, 1100.0, 1060.0]
    verdict = level_verdict(baseline=runs(*base), other=runs(*other))
    independent = ttest_ind(np.log(other), np.log(base), equal_var=True)
    low, high = independent.confidence_interval(0.95)
    assert verdict.tps.value == pytest.approx(math.exp(np.log(other).mean() - np.log(base).mean()))
    assert (verdict.tps.low, verdict.tps.high) == pytest.approx((math.exp(low), math.exp(high)))
    assert verdict.p_difference == pytest.approx(independent.pvalue)
    assert verdict.tps.dof == 6


def test_it_never_calls_identical_runs_faster_or_slower():
    same = simulated(5, tps=1000, count=5)
    verdict = level_verdict(baseline=same, other=same)
    assert verdict.tps.value == pytest.approx(1.0)
    assert verdict.verdict in (Verdict.SAME, Verdict.INCONCLUSIVE)


def test_it_rarely_calls_a_version_against_itself_different():
    verdicts = [
        level_verdict(
            baseline=simulated(100 + i, tps=1000, count=3),
            other=simulated(200 + i, tps=1000, count=3),
        ).verdict
        for i in range(40)
    ]
    # A 95% interval misses 1 in 20 by design: 2 of 40 expected.
    assert sum(v in (Verdict.FASTER, Verdict.SLOWER) for v in verdicts) <= 4


def test_it_calls_a_tiny_difference_between_quiet_runs_the_same():
    verdict = level_verdict(
        baseline=runs(1000.0, 1001.0, 999.0, 1000.5, 999.5),
        other=runs(1005.0, 1006.0, 1004.0, 1005.5, 1004.5),
    )
    assert verdict.verdict is Verdict.SAME
    assert 0.98 < verdict.tps.low and verdict.tps.high < 1.02
    assert verdict.p_same < 0.05


@pytest.mark.parametrize("gain", [1.03, 1.5])
def test_it_never_judges_one_repeat_a_side_without_the_host_history(gain):
    verdict = level_verdict(
        baseline=runs(1000.0, within_se=1.0), other=runs(1000.0 * gain, within_se=1.0)
    )
    assert verdict.verdict is Verdict.INCONCLUSIVE
    assert verdict.tps.low is None and verdict.p_difference is None
    assert verdict.tps.value == pytest.approx(gain)
    assert "unknown" in level_description(verdict)


def test_it_judges_one_repeat_a_side_with_the_host_history():
    noise = HostNoise(cv=0.01, dof=30, groups=10)
    clear = level_verdict(baseline=runs(1000.0), other=runs(1100.0), tps_noise=noise)
    close = level_verdict(baseline=runs(1000.0), other=runs(1020.0), tps_noise=noise)
    assert clear.verdict is Verdict.FASTER and clear.tps.history is History.USED
    assert clear.tps.dof == 30 and clear.tps.cv == pytest.approx(0.01)
    assert close.verdict is Verdict.INCONCLUSIVE
    assert "host's history" in level_description(clear)


def test_it_sets_the_history_aside_when_these_runs_vary_far_more():
    quiet_history = HostNoise(cv=0.002, dof=40, groups=20)
    verdict = level_verdict(
        baseline=runs(1000.0, 1100.0, 900.0),
        other=runs(1150.0, 1050.0, 1250.0),
        tps_noise=quiet_history,
    )
    assert verdict.tps.history is History.SET_ASIDE
    assert verdict.tps.dof == 4
    assert verdict.verdict is Verdict.INCONCLUSIVE


def test_it_does_not_let_runs_agree_better_than_their_seconds_are_measured():
    # Three repeats a side that happen to agree exactly, each with 1% within-run noise.
    verdict = level_verdict(
        baseline=runs(1000.0, 1000.0, 1000.0, within_se=10.0),
        other=runs(1015.0, 1015.0, 1015.0, within_se=10.15),
    )
    assert verdict.tps.cv == pytest.approx(0.01)
    assert verdict.tps.low < 1.0
    assert verdict.verdict is Verdict.INCONCLUSIVE


def test_it_adds_the_rank_test_and_effect_size_from_four_repeats_a_side():
    three = level_verdict(baseline=runs(1000.0, 1010.0, 990.0), other=runs(1100.0, 1110.0, 1090.0))
    assert three.mann_whitney_p is None and three.cliffs_delta is None
    four = level_verdict(
        baseline=runs(1000.0, 1010.0, 990.0, 1005.0), other=runs(1100.0, 1110.0, 1090.0, 995.0)
    )
    # other > baseline in 13 of 16 pairs, other < baseline in 3: delta (13 - 3) / 16
    assert four.cliffs_delta == pytest.approx(10 / 16)
    assert 0.05 < four.mann_whitney_p < 1


def test_it_says_how_many_repeats_would_settle_an_inconclusive_level():
    verdict = level_verdict(
        baseline=runs(1000.0, 1040.0, 970.0), other=runs(1030.0, 1060.0, 1010.0)
    )
    assert verdict.verdict is Verdict.INCONCLUSIVE
    assert verdict.repeats_needed is not None and verdict.repeats_needed > 3
    assert f"about {verdict.repeats_needed} repeats a side" in level_description(verdict)


def test_it_gives_the_latency_ratio_when_every_repeat_has_one():
    verdict = level_verdict(
        baseline=runs(1000.0, 1010.0, latency_ms=8.0), other=runs(1100.0, 1110.0, latency_ms=7.2)
    )
    assert verdict.latency is not None and verdict.latency.value == pytest.approx(0.9)
    partial = [*runs(1000.0, latency_ms=8.0), *runs(1010.0)]
    assert level_verdict(baseline=partial, other=runs(1100.0, 1110.0)).latency is None


def test_it_refuses_an_empty_side_or_a_threshold_outside_zero_and_one():
    with pytest.raises(ValueError):
        level_verdict(baseline=[], other=runs(1000.0))
    with pytest.raises(ValueError):
        level_verdict(baseline=runs(1000.0), other=runs(1000.0), threshold=0)


def borderline_levels() -> dict[int, LevelVerdict]:
    """One level at p ~ 0.03 (faster alone), five clearly inconclusive ones."""
    borderline = level_verdict(
        baseline=runs(1000.0, 1020.0, 990.0, 1010.0, 1000.0),
        other=runs(1030.0, 1045.0, 1015.0, 1030.0, 1010.0),
    )
    noisy = level_verdict(baseline=runs(1000.0, 1100.0, 950.0), other=runs(1010.0, 1120.0, 930.0))
    return {1: borderline, **{c: noisy for c in (2, 4, 8, 16, 32)}}


def test_it_corrects_for_the_number_of_levels_with_holm():
    levels = borderline_levels()
    assert levels[1].verdict is Verdict.FASTER
    assert 0.05 / 6 < levels[1].p_difference < 0.05
    alone = curve_verdict(levels={1: levels[1]})
    assert alone.counts[Verdict.FASTER] == 1
    curve = curve_verdict(levels=levels)
    assert curve.counts[Verdict.FASTER] == 0
    assert curve.counts[Verdict.INCONCLUSIVE] == 6
    assert curve.levels[1] is Verdict.INCONCLUSIVE


def clear_gain_levels() -> dict[int, LevelVerdict]:
    """Three levels 15 to 20% faster over five repeats a side."""
    return {
        c: level_verdict(
            baseline=simulated(10 + c, tps=1000, count=5),
            other=simulated(50 + c, tps=1000 * gain, count=5),
        )
        for c, gain in ((1, 1.15), (2, 1.20), (4, 1.15))
    }


def test_it_keeps_clear_levels_through_holm_and_takes_the_geometric_mean():
    levels = clear_gain_levels()
    curve = curve_verdict(levels=levels)
    assert curve.counts == {
        Verdict.FASTER: 3,
        Verdict.SLOWER: 0,
        Verdict.SAME: 0,
        Verdict.INCONCLUSIVE: 0,
    }
    expected = math.prod(v.tps.value for v in levels.values()) ** (1 / 3)
    assert curve.geomean == pytest.approx(expected)
    assert curve.low < expected < curve.high and curve.low > 1.1
    summary = curve_summary(curve, baseline_label="13.23", other_label="14.23")
    assert summary.startswith("14.23 against 13.23: faster at 3 of 3 client levels")


def test_it_gives_the_geometric_mean_a_verdict_from_the_same_holm_family():
    levels = clear_gain_levels()
    curve = curve_verdict(levels=levels)
    assert curve.verdict is Verdict.FASTER and curve.called
    assert "faster over the curve: geometric-mean tps ratio" in curve_summary(curve)
    # One level: the geometric mean is that level, tested once, not twice.
    alone = curve_verdict(levels={1: borderline_levels()[1]})
    assert alone.verdict is Verdict.FASTER and alone.levels[1] is Verdict.FASTER
    assert "over the curve" not in curve_summary(alone)


def test_it_corrects_the_levels_for_the_geometric_mean_tested_beside_them():
    # One level faster at p between 0.05/3 and 0.05/2, one far from it: Holm over the two
    # levels alone would keep the first; over three tests (the mean too) it does not.
    level = level_verdict(
        baseline=runs(1000.0, 1020.0, 990.0, 1010.0, 1000.0),
        other=runs(1031.0, 1046.0, 1016.0, 1031.0, 1011.0),
    )
    noisy = level_verdict(baseline=runs(1000.0, 1100.0, 950.0), other=runs(990.0, 1110.0, 940.0))
    assert 0.05 / 3 < level.p_difference < 0.05 / 2
    curve = curve_verdict(levels={1: level, 2: noisy})
    assert curve.levels[1] is Verdict.INCONCLUSIVE
    assert curve.verdict is Verdict.INCONCLUSIVE and not curve.called


def test_it_has_no_curve_interval_when_a_level_has_none():
    levels = {
        1: level_verdict(baseline=runs(1000.0), other=runs(1100.0)),
        2: level_verdict(baseline=runs(1000.0, 1010.0), other=runs(1100.0, 1090.0)),
    }
    curve = curve_verdict(levels=levels)
    assert curve.geomean is not None and curve.low is None and curve.high is None
    assert curve.levels[1] is Verdict.INCONCLUSIVE


def test_it_adjusts_p_values_exactly_as_statsmodels_holm_does():
    from statsmodels.stats.multitest import multipletests

    from benchhub.stats.verdicts import holm

    rng = np.random.default_rng(5)
    for size in (1, 2, 6, 9):
        for _ in range(20):
            pvalues = rng.uniform(0, 0.2, size) ** 2
            expected = multipletests(pvalues, alpha=0.05, method="holm")[1]
            assert holm(list(pvalues)) == pytest.approx(expected, abs=1e-15)
    assert list(holm([0.5, 0.4])) == [0.8, 0.8]


def in_runs(*groups: tuple[float, ...], first: int = 0) -> list[Repeat]:
    """Repeats grouped into runs: each tuple is one run's repeats."""
    return [
        Repeat(tps=RunMean(value=v), run=first + number)
        for number, group in enumerate(groups)
        for v in group
    ]


def test_it_takes_run_means_as_units_when_a_side_has_several_runs():
    base = ((1000.0, 1002.0, 999.0), (1040.0, 1041.0, 1039.0), (980.0, 981.0, 979.0))
    other = ((1060.0, 1061.0, 1059.0), (1010.0, 1012.0, 1011.0), (1090.0, 1088.0, 1091.0))
    verdict = level_verdict(baseline=in_runs(*base), other=in_runs(*other, first=10))
    base_means = [np.log(run).mean() for run in base]
    other_means = [np.log(run).mean() for run in other]
    low, high = ttest_ind(other_means, base_means, equal_var=True).confidence_interval(0.95)
    assert (verdict.tps.low, verdict.tps.high) == pytest.approx((math.exp(low), math.exp(high)))
    assert verdict.tps.dof == 4 and verdict.tps.runs == (3, 3) and verdict.tps.unit == "run_means"
    assert "Units: run means (3 runs a side)" in level_description(verdict)
    # Taken as nine independent repeats a side, the tight repeats inside each run would have
    # hidden the variation between runs: the old interval is far narrower.
    independent = level_verdict(
        baseline=runs(*(v for run in base for v in run)),
        other=runs(*(v for run in other for v in run)),
    )
    assert independent.tps.high - independent.tps.low < (verdict.tps.high - verdict.tps.low) / 2


def test_it_says_one_run_a_side_sees_only_the_variation_inside_one_job():
    verdict = level_verdict(
        baseline=in_runs((1000.0, 1010.0, 995.0)), other=in_runs((1100.0, 1090.0, 1105.0), first=5)
    )
    assert verdict.tps.unit == "repeats_in_one_job" and verdict.tps.runs == (1, 1)
    assert verdict.tps.dof == 4
    assert "variation between separate jobs is not seen" in level_description(verdict)


def test_it_pools_a_single_run_with_the_other_sides_runs():
    verdict = level_verdict(
        baseline=in_runs((1000.0, 1001.0), (1030.0, 1031.0), (990.0, 991.0)),
        other=in_runs((1100.0, 1101.0), first=7),
    )
    assert verdict.tps.runs == (3, 1) and verdict.tps.dof == 2


def test_it_keeps_the_within_run_floor_on_run_means():
    quiet = [Repeat(tps=RunMean(value=1000.0, within_se=30.0), run=r) for r in (1, 1, 2, 2)]
    other = [Repeat(tps=RunMean(value=1000.0, within_se=30.0), run=r) for r in (3, 3, 4, 4)]
    verdict = level_verdict(baseline=quiet, other=other)
    # Identical run means, but each mean is known to 3% / sqrt(2) only.
    assert verdict.tps.cv == pytest.approx(0.03 / math.sqrt(2))
    assert verdict.verdict is Verdict.INCONCLUSIVE


def test_it_tests_every_level_together_as_each_alone():
    # scipy picks its exact or asymptotic method from ties anywhere in one call: a level with
    # ties among levels without must not change their p.
    samples = [
        ([100.0, 101.0, 102.0, 103.0], [104.0, 105.0, 106.0, 107.0]),
        ([100.0, 100.0, 102.0, 103.0], [102.0, 105.0, 106.0, 107.0]),
        ([100.0, 103.0, 101.0, 99.0], [98.0, 104.0, 100.5, 102.5]),
        ([100.0, 101.0, 102.0, 103.0, 99.0], [104.0, 105.0, 106.0, 107.0]),
        ([100.0, 101.0, 102.0], [104.0, 105.0, 106.0]),
    ]
    alone = []
    for base, other in samples[:4]:
        result = mannwhitneyu(other, base, alternative="two-sided")
        alone.append((result.pvalue, 2 * result.statistic / (len(base) * len(other)) - 1))
    assert rank_tests(samples) == [*alone, (None, None)]


def test_it_gives_each_level_the_verdict_it_gets_alone():
    sides = {
        1: (runs(100, 101, 102, 103), runs(104, 105, 106, 107)),
        2: (runs(100, 100, 102, 103), runs(102, 105, 106, 107)),
        4: (runs(200, 201), runs(199, 203)),
    }
    together = level_verdicts(sides=sides, threshold=0.02)
    assert together == {
        c: level_verdict(baseline=b, other=o, threshold=0.02) for c, (b, o) in sides.items()
    }
    assert together[1].mann_whitney_p is not None and together[4].mann_whitney_p is None
