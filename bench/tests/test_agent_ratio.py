"""The agent section's ratio is paired: a drift that moves both passes of a pair cancels."""

import numpy as np
import pytest

from bench.agent import paired_ratios
from bench.intervals import curve_interval, mean_interval


def drifting_pairs(*, cost: float, pairs: int = 12, seed: int = 3):
    """Bare and agent passes at 1 and 2 clients, each pair on a machine 15% faster or slower
    than the last (the drift both passes share), with 1% of noise of their own."""
    rng = np.random.default_rng(seed)
    drift = np.exp(rng.normal(0.0, 0.15, pairs))
    bare, agent = {}, {}
    for clients, tps in ((1, 12_000.0), (2, 20_000.0)):
        bare[clients] = list(tps * drift * np.exp(rng.normal(0.0, 0.01, pairs)))
        agent[clients] = list(tps * cost * drift * np.exp(rng.normal(0.0, 0.01, pairs)))
    return bare, agent


def test_a_drift_both_passes_share_leaves_the_paired_interval_narrow():
    bare, agent = drifting_pairs(cost=0.99)
    paired = mean_interval(values=paired_ratios(bare=bare, other=agent))
    unpaired = curve_interval(levels={c: (bare[c], agent[c]) for c in bare})
    assert paired.low < 0.99 < paired.high
    assert 0.97 < paired.low and paired.high < 1.03
    # The same passes, unpaired: the drift is counted as noise, and the band is out of reach.
    assert unpaired.high - unpaired.low > 4 * (paired.high - paired.low)


def test_each_pair_is_the_geometric_mean_of_its_levels_ratios():
    ratios = paired_ratios(bare={1: [100.0, 50.0], 2: [200.0, 100.0]},
                           other={1: [110.0, 50.0], 2: [180.0, 100.0]})  # fmt: skip
    assert ratios == pytest.approx([np.sqrt(1.1 * 0.9), 1.0])


def test_it_refuses_a_level_without_a_pass_of_each_arm():
    with pytest.raises(ValueError, match="every level"):
        paired_ratios(bare={1: [100.0, 50.0]}, other={1: [100.0]})
    with pytest.raises(ValueError, match="every level"):
        paired_ratios(bare={1: [100.0]}, other={2: [100.0]})


def test_the_agent_sections_size_follows_its_flags_and_refuses_one_pair(capsys):
    from bench.run import agent_options, parse_args

    default = agent_options(parse_args([]))
    assert (default.pairs, default.duration_s, default.contrast) == (36, 5.0, False)
    chosen = agent_options(parse_args(["--agent-pairs", "24", "--agent-seconds", "10",
                                       "--agent-contrast"]))  # fmt: skip
    assert (chosen.pairs, chosen.duration_s, chosen.contrast) == (24, 10.0, True)
    with pytest.raises(SystemExit):
        parse_args(["--agent-pairs", "1"])
    assert "--agent-pairs: at least 2" in capsys.readouterr().err
