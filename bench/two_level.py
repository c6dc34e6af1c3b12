"""Does the verdicts' 95% interval hold the true ratio when runs vary as well as repeats?
(docs/statistics.md, "Two levels: runs and the repeats inside them")

    .venv/bin/python -m bench.two_level [--trials 1000] [--seed 1]

Each trial simulates a comparison the way separate jobs make one: each side is `runs` runs, and
each run has `repeats` repeats. A run's level is the version's true tps times a log-normal run
effect (its cluster, its data load, its hour: 2% by default); each repeat inside it adds its own
log-normal effect (0.5%), and carries the within-run standard error its per-second samples would
show (0.3%). The version is 3% faster than the baseline. The interval the verdicts compute
(`verdicts.ratio` with each repeat's run named: run means as units) should hold 1.03 in 93-97% of
trials; for contrast, the same repeats with their runs left unnamed (every repeat independent,
the interval before runs were told apart).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest

from benchhub.stats.repeats import RunMean
from benchhub.stats.verdicts import ratio

TRUE_RATIO = 1.03
BASE_TPS = 1000.0


@dataclass(frozen=True)
class Shape:
    runs: int = 3  # runs (separate jobs) a side
    repeats: int = 3  # repeats inside each run
    between_cv: float = 0.02  # sd of log of a run's effect
    repeat_cv: float = 0.005  # sd of log of a repeat's effect inside its run
    within_cv: float = 0.003  # each repeat's standard error from its per-second samples


@dataclass(frozen=True)
class Coverage:
    trials: int
    covered: int  # runs named: run means as units
    old_covered: int  # runs not named: repeats as units

    @staticmethod
    def interval(covered: int, trials: int) -> tuple[float, float]:
        """Clopper-Pearson 95% interval of a share."""
        found = binomtest(covered, trials).proportion_ci(confidence_level=0.95, method="exact")
        return float(found.low), float(found.high)


def side(
    rng: np.random.Generator, *, tps: float, shape: Shape, first_run: int
) -> tuple[list[RunMean], list[int]]:
    """One side's repeats and the run each belongs to."""
    values: list[RunMean] = []
    runs: list[int] = []
    for run in range(first_run, first_run + shape.runs):
        level = tps * np.exp(rng.normal(0.0, shape.between_cv))
        for _ in range(shape.repeats):
            value = float(level * np.exp(rng.normal(0.0, shape.repeat_cv)))
            values.append(RunMean(value=value, within_se=value * shape.within_cv))
            runs.append(run)
    return values, runs


def simulate(*, trials: int, seed: int, shape: Shape) -> Coverage:
    """`trials` comparisons, and how many intervals held TRUE_RATIO, new and old."""
    rng = np.random.default_rng(seed)
    covered = old = 0
    for _ in range(trials):
        base, base_runs = side(rng, tps=BASE_TPS, shape=shape, first_run=0)
        other, other_runs = side(rng, tps=BASE_TPS * TRUE_RATIO, shape=shape, first_run=10_000)
        found = ratio(base, other, runs=(base_runs, other_runs))
        before = ratio(base, other)
        covered += _holds(found.low, found.high)
        old += _holds(before.low, before.high)
    return Coverage(trials=trials, covered=covered, old_covered=old)


def _holds(low: float | None, high: float | None) -> bool:
    return low is not None and high is not None and low <= TRUE_RATIO <= high


SHAPES = (
    Shape(runs=3, repeats=3),
    Shape(runs=2, repeats=3),
    Shape(runs=5, repeats=2),
    Shape(runs=3, repeats=3, between_cv=0.005),
    Shape(runs=1, repeats=3),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print("| runs a side x repeats | between-run / repeat | trials | coverage, runs as units "
          "(Clopper-Pearson 95%) | coverage, repeats as units (before) |")  # fmt: skip
    print("|---|---|---|---|---|")
    for shape in SHAPES:
        found = simulate(trials=args.trials, seed=args.seed, shape=shape)
        low, high = Coverage.interval(found.covered, found.trials)
        old_low, old_high = Coverage.interval(found.old_covered, found.trials)
        print(
            f"| {shape.runs} x {shape.repeats} | {shape.between_cv:.1%} / {shape.repeat_cv:.1%} "
            f"| {found.trials} | {found.covered / found.trials:.1%} ({low:.1%}-{high:.1%}) "
            f"| {found.old_covered / found.trials:.1%} ({old_low:.1%}-{old_high:.1%}) |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
