"""The bench's intervals and verdicts: known samples in, checked against scipy directly."""

import json
import math

import numpy as np
import pytest
from scipy import stats

from bench.figures import Figure, table, write_results
from bench.history import FARM_HOSTS, FARM_WORKLOADS, default_shape, workload_names
from bench.intervals import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    Verdict,
    curve_interval,
    mean_interval,
    percentile_interval,
    ratio_interval,
    verdict,
)
from bench.queueing import windows

# Upload and COPY medians (ms) of five ABAB rounds.
FLOOR = [41.8, 43.0, 40.2, 45.1, 42.4]
BENCH = [131.0, 140.5, 127.9, 151.2, 138.0]


def test_it_gives_the_ratio_of_geometric_means_with_students_t_on_the_logs():
    found = ratio_interval(floor=FLOOR, bench=BENCH)
    logs = np.log(BENCH), np.log(FLOOR)
    expected = stats.ttest_ind(*logs).confidence_interval(0.95)
    assert found.value == pytest.approx(math.exp(logs[0].mean() - logs[1].mean()))
    assert found.low == pytest.approx(math.exp(expected.low))
    assert found.high == pytest.approx(math.exp(expected.high))
    assert found.low < found.value < found.high


def test_it_gives_no_ratio_interval_from_one_round():
    found = ratio_interval(floor=[42.0], bench=[130.0])
    assert found.value == pytest.approx(130 / 42)
    assert found.low is None and found.high is None


def test_it_reads_one_level_of_a_curve_as_that_levels_ratio():
    one = curve_interval(levels={4: (FLOOR, BENCH)})
    alone = ratio_interval(floor=FLOOR, bench=BENCH)
    assert (one.value, one.low, one.high) == pytest.approx((alone.value, alone.low, alone.high))


def test_it_takes_the_geometric_mean_of_the_levels_with_an_interval_around_it():
    bare = {1: [12100.0, 12030.0, 12200.0], 2: [93700.0, 95100.0, 94000.0]}
    agent = {1: [12050.0, 11990.0, 12120.0], 2: [94200.0, 93900.0, 94800.0]}
    found = curve_interval(levels={c: (bare[c], agent[c]) for c in bare})
    per_level = [ratio_interval(floor=bare[c], bench=agent[c]).value for c in sorted(bare)]
    assert found.value == pytest.approx(math.sqrt(per_level[0] * per_level[1]))
    assert found.low is not None and found.high is not None
    assert found.low < found.value < found.high
    assert verdict(low=found.low, high=found.high, op="within", target=0.97, target_high=1.03) \
        is Verdict.MET  # fmt: skip


def test_it_bootstraps_a_percentile_over_the_requests_of_one_round_as_scipy_does():
    rng = np.random.default_rng(5)
    latencies = list(rng.lognormal(3.5, 0.4, 60))
    found = percentile_interval(rounds=[latencies], q=95)
    expected = stats.bootstrap(
        (latencies,),
        lambda x, axis: np.percentile(x, 95, axis=axis),
        n_resamples=BOOTSTRAP_RESAMPLES,
        method="BCa",
        random_state=np.random.default_rng(BOOTSTRAP_SEED),
    ).confidence_interval
    assert found.value == pytest.approx(np.percentile(latencies, 95))
    assert (found.low, found.high) == pytest.approx((expected.low, expected.high))
    assert "over 60 requests" in found.method


def test_it_bootstraps_a_percentile_over_whole_rounds():
    rng = np.random.default_rng(6)
    # Rounds on a machine whose load moves: each round's latencies share its level.
    rounds = [
        list(rng.lognormal(3.5 + shift, 0.2, 20)) for shift in (0.0, 0.3, -0.1, 0.5, 0.1, 0.2)
    ]
    found = percentile_interval(rounds=rounds, q=95)
    pooled = np.concatenate(rounds)
    expected = stats.bootstrap(
        (np.arange(len(rounds)),),
        lambda picked: np.percentile(np.concatenate([rounds[i] for i in picked]), 95),
        vectorized=False,
        n_resamples=BOOTSTRAP_RESAMPLES,
        method="BCa",
        random_state=np.random.default_rng(BOOTSTRAP_SEED),
    ).confidence_interval
    assert found.value == pytest.approx(np.percentile(pooled, 95))
    assert (found.low, found.high) == pytest.approx((expected.low, expected.high))
    # The rounds' shared load makes it wider than the requests taken as independent.
    naive = percentile_interval(rounds=[pooled], q=95)
    assert found.high - found.low > naive.high - naive.low
    assert "over 6 rounds of 120 requests" in found.method


def test_it_gives_no_percentile_interval_when_every_request_took_the_same():
    found = percentile_interval(rounds=[[20.0, 20.0], [20.0, 20.0]], q=95)
    assert found.value == 20.0 and found.low is None and found.high is None
    with pytest.raises(ValueError):
        percentile_interval(rounds=[[], []], q=95)


def test_it_averages_rates_geometrically_and_shares_arithmetically_with_students_t():
    rates = [14.2, 15.1, 13.8, 16.0]
    found = mean_interval(values=rates)
    expected = stats.ttest_1samp(np.log(rates), 0.0).confidence_interval(0.95)
    assert found.value == pytest.approx(math.exp(np.log(rates).mean()))
    assert (found.low, found.high) == pytest.approx(
        (math.exp(expected.low), math.exp(expected.high))
    )

    cpu = [0.0, 0.3, 0.25, 0.4]
    plain = mean_interval(values=cpu, geometric=False)
    expected = stats.ttest_1samp(cpu, 0.0).confidence_interval(0.95)
    assert plain.value == pytest.approx(np.mean(cpu))
    assert (plain.low, plain.high) == pytest.approx((expected.low, expected.high))
    # A share cannot be below 0: the t interval of shares near 0 is cut there.
    near_zero = mean_interval(values=[0.0, 0.6], geometric=False, minimum=0.0)
    expected = stats.ttest_1samp([0.0, 0.6], 0.0).confidence_interval(0.95)
    assert expected.low < 0 and near_zero.low == 0.0
    assert near_zero.high == pytest.approx(expected.high)
    assert mean_interval(values=[3.0]).low is None
    with pytest.raises(ValueError):
        mean_interval(values=cpu)  # a zero has no logarithm


@pytest.mark.parametrize(
    ("low", "high", "op", "expected"),
    [
        (1.6, 1.9, "<=", Verdict.MET),
        (1.9, 2.3, "<=", Verdict.UNDECIDED),
        (2.1, 2.5, "<=", Verdict.MISSED),
        (0.72, 0.8, ">=", Verdict.MET),
        (0.65, 0.75, ">=", Verdict.UNDECIDED),
        (0.3, 0.4, ">=", Verdict.MISSED),
    ],
)
def test_it_meets_a_bound_only_with_the_whole_interval_on_its_side(low, high, op, expected):
    target = 2.0 if op == "<=" else 0.7
    assert verdict(low=low, high=high, op=op, target=target) is expected


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (0.98, 1.02, Verdict.MET),
        (0.96, 1.01, Verdict.UNDECIDED),
        (1.01, 1.05, Verdict.UNDECIDED),
        (0.88, 0.93, Verdict.MISSED),
        (1.04, 1.06, Verdict.MISSED),
    ],
)
def test_it_meets_a_band_only_with_the_whole_interval_inside(low, high, expected):
    assert verdict(low=low, high=high, op="within", target=0.97, target_high=1.03) is expected


def test_it_refuses_a_verdict_it_cannot_read():
    with pytest.raises(ValueError):
        verdict(low=2.0, high=1.0, op="<=", target=1.5)
    with pytest.raises(ValueError):
        verdict(low=1.0, high=1.0, op="within", target=0.97)
    with pytest.raises(ValueError):
        verdict(low=1.0, high=1.0, op="==", target=1.0)


def test_it_prints_and_writes_the_interval_target_floor_and_verdict(tmp_path):
    ratio = ratio_interval(floor=FLOOR, bench=[v * 2 for v in FLOOR])  # exactly 2x: straddles
    figures = [
        Figure.measured("ingest", "upload median / COPY median", ratio, "x", op="<=",
                        target=2.0, target_text="<= 2 x", floor=1.0),
        Figure("queue", "double claims", 0, "jobs", op="<=", target=0, exact=True),
        Figure("agent", "agent tps / bare tps", 0.907, "x", op="within", target=0.97,
               target_high=1.03, low=0.88, high=0.93),
    ]  # fmt: skip
    assert [f.verdict for f in figures] == ["undecided", "met", "MISSED"]
    assert [f.met for f in figures] == [None, True, False]
    printed = table(figures)
    assert "95% interval" in printed.splitlines()[0]
    assert "undecided" in printed and "exact" in printed and "0.88 .. 0.93" in printed
    assert "within 0.97 .. 1.03 x" in printed
    path = tmp_path / "results.json"
    write_results(path, figures=figures, info={"hostname": "h", "cpu_model": "c", "cpus": 2},
                  options={})  # fmt: skip
    written = json.loads(path.read_text())["figures"]
    assert written[0]["verdict"] == "undecided" and written[0]["met"] is None
    assert written[0]["low"] == pytest.approx(ratio.low) and written[0]["floor"] == 1.0
    assert "pooled Student's t" in written[0]["note"]
    assert written[2]["verdict"] == "MISSED" and written[2]["target_high"] == 1.03


def test_it_groups_claims_into_windows_of_one_poll_interval():
    timed = [(100.0, 5.0), (100.5, 6.0), (112.0, 7.0), (131.0, 8.0), (101.0, 9.0)]
    assert windows(timed, seconds=10.0) == [[5.0, 6.0, 9.0], [7.0], [8.0]]
    assert windows([], seconds=10.0) == []


def test_it_shapes_the_history_as_the_farm_from_ten_million_results():
    assert default_shape(1_000_000) == (24, 5)
    assert default_shape(10_000_000) == (FARM_HOSTS, FARM_WORKLOADS) == (200, 40)
    names = workload_names(40)
    assert len(set(names)) == 40 and names[:2] == ["select-only", "tpcb-like"]
    assert names[-1] == "farm-39"
