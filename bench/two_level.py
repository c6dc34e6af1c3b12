"""Does the verdicts' 95% interval hold the true ratio when runs vary as well as repeats?
And how often is a version called different from itself over a whole curve, when a run's
effect is shared by all its client levels? (docs/statistics.md, "Two levels: runs and the
repeats inside them", and "The whole curve")

    .venv/bin/python -m bench.two_level [--trials 1000] [--seed 1]

Each trial simulates a comparison the way separate jobs make one: each side is `runs` runs, and
each run has `repeats` repeats. A run's level is the version's true tps times a log-normal run
effect (its cluster, its data load, its hour: 2% by default); each repeat inside it adds its own
log-normal effect (0.5%), and carries the within-run standard error its per-second samples would
show (0.3%). The version is 3% faster than the baseline. The interval the verdicts compute
(`verdicts.ratio` with each repeat's run named: run means as units) should hold 1.03 in 93-97% of
trials; for contrast, the same repeats with their runs left unnamed (every repeat independent,
the interval before runs were told apart).

The whole-curve A/A (`curve_aa`): both sides are the same version, each of `runs` separate runs
that measure every level (1, 2, 4, 8 clients); a run's effect (2%) is shared by its levels, as
one cluster and one data load are, and each level of a run adds its own (0.5%). A curve is
called different when `curve_verdict` calls a level or the geometric mean faster or slower. For
contrast, the rule before runs were the geometric mean's units: Holm over the levels alone, and
a geometric-mean interval that treats the levels as independent, called when it excludes 1.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest

from benchhub.stats.repeats import Repeat, RunMean
from benchhub.stats.verdicts import (
    ALPHA,
    Verdict,
    curve_verdict,
    holm,
    level_verdict,
    levels_geomean,
    ratio,
    verdict_from,
)

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


@dataclass(frozen=True)
class CurveAA:
    trials: int
    called: int  # curve_verdict: levels and the geometric mean, one Holm family
    old_called: int  # Holm over the levels, or an independent-levels interval off 1


CURVE_LEVELS = (1, 2, 4, 8)


def curve_aa(*, trials: int, seed: int, runs: int = 3, level_cv: float = 0.005) -> CurveAA:
    """`trials` A/A comparisons over CURVE_LEVELS, each side `runs` runs whose effect
    (Shape.between_cv) every level of the run shares."""
    rng = np.random.default_rng(seed)
    called = old = 0
    for _ in range(trials):
        sides = []
        for first in (0, 10_000):
            effects = rng.normal(0.0, Shape.between_cv, size=runs)
            sides.append(
                {
                    c: [
                        Repeat(
                            tps=RunMean(
                                value=float(BASE_TPS * c * np.exp(e + rng.normal(0.0, level_cv)))
                            ),
                            run=first + i,
                        )
                        for i, e in enumerate(effects)
                    ]
                    for c in CURVE_LEVELS
                }
            )
        levels = {c: level_verdict(baseline=sides[0][c], other=sides[1][c]) for c in CURVE_LEVELS}
        called += curve_verdict(levels=levels).called
        old += _called_before(list(levels.values()))
    return CurveAA(trials=trials, called=called, old_called=old)


def _called_before(levels: list) -> bool:
    """The former rule: a level faster or slower after Holm over the levels alone, or the
    geometric mean's interval with independent levels (Welch-Satterthwaite) off 1."""
    differences = holm([v.p_difference for v in levels])
    sameness = holm([v.p_same for v in levels])
    for v, p_difference, p_same in zip(levels, differences, sameness, strict=True):
        found = verdict_from(
            p_difference=float(p_difference),
            p_same=float(p_same),
            log_ratio=v.tps.log_value,
            alpha=ALPHA,
        )
        if found in (Verdict.FASTER, Verdict.SLOWER):
            return True
    mean = levels_geomean([v.tps for v in levels])
    return mean.low is not None and (mean.low > 1 or (mean.high or 0) < 1)


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
        head = f"{shape.runs} x {shape.repeats} | {shape.between_cv:.1%} / {shape.repeat_cv:.1%}"
        print(_row(head, found.trials, found.covered, found.old_covered))
    print()
    print("| A/A over levels 1, 2, 4, 8 | runs a side | trials | called different "
          "(Clopper-Pearson 95%) | called different, the rule before |")  # fmt: skip
    print("|---|---|---|---|---|")
    for runs in (3, 2, 5):
        aa = curve_aa(trials=args.trials, seed=args.seed, runs=runs)
        head = f"a run's 2% effect shared by its levels, 0.5% per level | {runs}"
        print(_row(head, aa.trials, aa.called, aa.old_called))
    return 0


def _row(head: str, trials: int, now: int, before: int) -> str:
    """A table row: the shares now and before, each with its Clopper-Pearson interval."""
    shares = []
    for count in (now, before):
        low, high = Coverage.interval(count, trials)
        shares.append(f"{count / trials:.1%} ({low:.1%}-{high:.1%})")
    return f"| {head} | {trials} | {shares[0]} | {shares[1]} |"


if __name__ == "__main__":
    sys.exit(main())
