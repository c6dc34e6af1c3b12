"""Does change-point detection find steps in a series of results, and only them?
(docs/statistics.md)

    python -m bench.detection [--series 500] [--seed 1]

Series of 200 run results with 1% Gaussian noise (bench.simulate), each with one step up or down
of 1, 2, 3 or 5 times the noise at a random point, and flat ones (Gaussian, and Student's t with
3 dof for outliers). A detection within TOLERANCE points of the true step is a hit (one per
step); any other is a false alarm. Detectors: Otava with its default p (0.001) and at p
0.0001, Otava as benchhub.stats.changepoints uses it (its defaults), and the plain rule of many
dashboards, a point more than 3% or 5% from the mean of the 10 before it. Goals: F1 >= 0.9 from
3 times the noise; at most 1 false alarm per 1,000 flat points. Also the time per series.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bench.figures import Figure, percentile
from bench.intervals import percentile_interval
from bench.simulate import step_series
from benchhub.stats.changepoints import MAX_P, MIN_RUNS, change_points

POINTS = 200
STEPS = (1.0, 2.0, 3.0, 5.0)
TOLERANCE = 3
NOISE_CV = 0.01
LOOKBACK = 10

Detector = Callable[[np.ndarray], list[int]]


def otava(max_p: float) -> Detector:
    """Otava as it comes, at `max_p`."""

    def detect(values: np.ndarray) -> list[int]:
        found = change_points(
            values=values, max_p=max_p, min_runs=1, min_change=0.0, outlier_noises=0.0
        )
        return [p.index for p in found]

    return detect


def benchhub(values: np.ndarray) -> list[int]:
    """Otava as BenchHub uses it (stats.changepoints' defaults)."""
    return [p.index for p in change_points(values=values)]


def plain_threshold(fraction: float) -> Detector:
    """Alert at a point more than `fraction` away from the mean of the LOOKBACK points before
    it; after an alert, the next LOOKBACK points start a new baseline."""

    def detect(values: np.ndarray) -> list[int]:
        alerts = []
        i = LOOKBACK
        while i < len(values):
            before = values[i - LOOKBACK : i].mean()
            if abs(values[i] / before - 1) > fraction:
                alerts.append(i)
                i += LOOKBACK
            i += 1
        return alerts

    return detect


OURS = f"BenchHub: Otava, p < {MAX_P:g}, levels of {MIN_RUNS}+ runs, changes over the noise"
DETECTORS: dict[str, Detector] = {
    "Otava default (p < 0.001)": otava(1e-3),
    "Otava, p < 0.0001 (BenchHub before)": otava(1e-4),
    OURS: benchhub,
    "plain threshold 3%": plain_threshold(0.03),
    "plain threshold 5%": plain_threshold(0.05),
}


@dataclass
class Score:
    hits: int = 0
    misses: int = 0
    false_alarms: int = 0
    points: int = 0

    @property
    def precision(self) -> float:
        found = self.hits + self.false_alarms
        return self.hits / found if found else 1.0

    @property
    def recall(self) -> float:
        steps = self.hits + self.misses
        return self.hits / steps if steps else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def false_per_1000(self) -> float:
        return self.false_alarms / self.points * 1000


def score(found: list[int], step_at: int | None, into: Score, points: int) -> None:
    into.points += points
    hit = step_at is not None and any(abs(i - step_at) <= TOLERANCE for i in found)
    if step_at is not None:
        into.hits += hit
        into.misses += not hit
    into.false_alarms += len(found) - int(hit)


@dataclass
class Result:
    scores: dict[str, dict[str, Score]]  # detector -> case -> score
    times_ms: list[float]  # BenchHub detector, per series


def cases() -> list[tuple[str, float, bool]]:
    steps = [(f"step {k:g}x noise", k, False) for k in STEPS]
    return [*steps, ("flat", 0.0, False), ("flat, t(3) outliers", 0.0, True)]


def detection_bench(*, series: int = 500, seed: int = 1) -> Result:
    scores = {name: {case: Score() for case, _, _ in cases()} for name in DETECTORS}
    times: list[float] = []
    ours = OURS
    for case_index, (case, step, heavy) in enumerate(cases()):
        rng = np.random.default_rng([seed, case_index])
        for _ in range(series):
            values, at = step_series(
                rng, points=POINTS, step_sigmas=step, noise_cv=NOISE_CV, heavy_tails=heavy
            )
            for name, detect in DETECTORS.items():
                started = time.perf_counter()
                found = detect(values)
                if name == ours:
                    times.append((time.perf_counter() - started) * 1000)
                score(found, at, scores[name][case], POINTS)
    return Result(scores=scores, times_ms=times)


def table(result: Result) -> str:
    steps = [case for case, step, _ in cases() if step]
    flats = [case for case, step, _ in cases() if not step]
    head = " | ".join(f"{c}: P / R / F1" for c in steps)
    lines = [
        f"| detector | {head} | "
        + " | ".join(f"{c}: false alarms per 1,000 points" for c in flats)
        + " |",
        "|---" * (1 + len(steps) + len(flats)) + "|",
    ]
    for name, by_case in result.scores.items():
        cells = [
            f"{by_case[c].precision:.2f} / {by_case[c].recall:.2f} / {by_case[c].f1:.2f}"
            for c in steps
        ]
        cells += [f"{by_case[c].false_per_1000:.2f}" for c in flats]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    times = result.times_ms
    lines.append("")
    lines.append(
        f"BenchHub detector, {POINTS} points: {percentile(times, 50):.1f} ms median, "
        f"{percentile(times, 95):.1f} ms p95, {max(times):.1f} ms max over {len(times)} series"
    )
    return "\n".join(lines)


def figures(result: Result) -> list[Figure]:
    ours = result.scores[OURS]
    made = [
        Figure(
            "statistics",
            f"change points F1, step {k:g}x noise",
            ours[f"step {k:g}x noise"].f1,
            "",
            op=">=" if k >= 3 else None,
            target=0.9 if k >= 3 else None,
        )
        for k in STEPS
    ]
    made.append(
        Figure(
            "statistics",
            "change points false alarms, flat series",
            ours["flat"].false_per_1000,
            "per 1,000 points",
            op="<=",
            target=1.0,
        )
    )
    made.append(
        Figure.measured(
            "statistics",
            f"change points p95 per series of {POINTS}",
            percentile_interval(rounds=[result.times_ms], q=95),
            "ms",
            op="<=",
            target=50.0,
        )
    )
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.detection", description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=500, help="series per case")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(table(detection_bench(series=args.series, seed=args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
