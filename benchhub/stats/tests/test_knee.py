import numpy as np
import pytest

from benchhub.stats.knee import CurveLevel, Knee, KneeRule, knee


def _curve(tps: dict[int, list[float]], latency: dict[int, list[float]] | None = None):
    latency = latency or {}
    return [CurveLevel(c, values, latency.get(c, ())) for c, values in tps.items()]


def _noisy(mean: float, *, n: int = 5, cv: float = 0.01, seed: int) -> list[float]:
    return list(np.random.default_rng(seed).normal(mean, mean * cv, n))


def test_it_finds_where_a_linear_rise_turns_flat():
    # Flat from 8 clients: the same five repeats in another order at each level.
    flat = [792.0, 800.0, 808.0, 796.0, 804.0]
    tps = {c: _noisy(m, seed=c) for c, m in {1: 100, 2: 200, 4: 400}.items()}
    tps |= {8: flat, 16: flat[::-1], 32: flat[1:] + flat[:1]}
    curve = _curve(tps)
    found = knee(curve)
    assert found is not None
    assert (found.clients, found.next_clients, found.rule) == (8, 16, KneeRule.TPS_NOT_HIGHER)
    assert found.tps == np.median(curve[3].tps)
    assert found.p_value == pytest.approx(0.5)


def test_it_finds_the_peak_of_a_curve_that_falls_after_it():
    means = {1: 100, 2: 190, 4: 350, 8: 300, 16: 200}
    found = knee(_curve({c: _noisy(m, seed=c) for c, m in means.items()}))
    assert found is not None
    assert (found.clients, found.rule) == (4, KneeRule.TPS_NOT_HIGHER)
    assert found.p_value is not None and found.p_value > 0.99


def test_it_has_no_knee_for_a_curve_that_never_saturates():
    means = {1: 100, 2: 180, 4: 330, 8: 600, 16: 1000}
    assert knee(_curve({c: _noisy(m, seed=c) for c, m in means.items()})) is None


def test_it_stops_where_the_rise_is_within_the_noise_of_the_repeats():
    # 4 clients' mean is 10% above 2 clients', but the repeats vary by 30%: not significant.
    curve = _curve(
        {
            1: _noisy(100, cv=0.01, seed=1),
            2: [130.0, 200.0, 270.0, 160.0, 240.0],
            4: [150.0, 300.0, 210.0, 190.0, 250.0],
            8: _noisy(600, cv=0.01, seed=8),
        }
    )
    found = knee(curve)
    assert found is not None
    assert (found.clients, found.rule) == (2, KneeRule.TPS_NOT_HIGHER)
    assert 0.05 <= found.p_value < 0.5


def test_it_fires_on_latency_rising_faster_than_clients():
    # tps still rises significantly from 4 to 8 clients, but the latency grows 2.5 times for
    # twice the clients.
    tps = {c: _noisy(m, seed=c) for c, m in {2: 200, 4: 400, 8: 500}.items()}
    latency = {2: [1.0, 1.0], 4: [1.0, 1.1], 8: [2.5, 2.6]}
    found = knee(_curve(tps, latency))
    assert found == Knee(
        clients=4,
        tps=float(np.median(tps[4])),
        rule=KneeRule.LATENCY_FASTER_THAN_CLIENTS,
        next_clients=8,
        p_value=found.p_value,
    )
    assert found.p_value < 0.05


def test_it_compares_single_repeats_without_a_test():
    found = knee(_curve({1: [100.0], 2: [200.0], 4: [190.0]}))
    assert found == Knee(
        clients=2, tps=200.0, rule=KneeRule.TPS_NOT_HIGHER, next_clients=4, p_value=None
    )
    assert knee(_curve({1: [100.0], 2: [200.0], 4: [201.0]})) is None


def test_it_leaves_out_levels_without_tps_and_needs_two_levels():
    assert knee(_curve({4: [100.0, 101.0]})) is None
    assert knee([]) is None
    found = knee(_curve({1: [100.0, 100.0], 2: [0.0], 4: [100.0, 100.0]}))
    assert found is not None and (found.clients, found.next_clients) == (1, 4)
