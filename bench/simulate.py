"""Simulated pgbench data for the statistics benchmarks (bench.coverage, bench.detection).

Repeats: each run's level is the version's true tps times a run-to-run random effect (log-normal,
or Student's t on the log scale for heavy tails), and within the run each second's tps follows
an AR(1) process around that level, as pgbench's `-P 1` progress does (checkpoints and the OS
make neighbouring seconds alike). Series: one value per run with Gaussian (or Student's t) noise
and at most one step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchhub.stats.repeats import Repeat, repeat


@dataclass(frozen=True)
class RunShape:
    """How simulated runs vary. Defaults: a few percent, as on a quiet benchmark host."""

    run_cv: float = 0.02  # run-to-run variation of a run's level (sd of its log)
    second_cv: float = 0.04  # per-second variation within a run, relative to its level
    phi: float = 0.7  # lag-1 autocorrelation of the per-second samples
    seconds: int = 60  # steady-state seconds per run
    heavy_tails: bool = False  # run effects from Student's t with 4 dof (same sd) instead


def ar1(rng: np.random.Generator, *, n: int, phi: float, sd: float) -> np.ndarray:
    """A stationary AR(1) series of n values with marginal standard deviation sd."""
    shocks = rng.normal(0.0, sd * np.sqrt(1 - phi**2), n)
    values = np.empty(n)
    values[0] = rng.normal(0.0, sd)
    for i in range(1, n):
        values[i] = phi * values[i - 1] + shocks[i]
    return values


def run_effect(rng: np.random.Generator, shape: RunShape) -> float:
    if shape.heavy_tails:
        # Student's t with 4 dof has variance 2; scale it to run_cv.
        return float(rng.standard_t(4) * shape.run_cv / np.sqrt(2))
    return float(rng.normal(0.0, shape.run_cv))


def run_samples(rng: np.random.Generator, *, tps: float, shape: RunShape) -> np.ndarray:
    """The steady-state per-second tps of one run of a version whose true tps is `tps`."""
    level = tps * np.exp(run_effect(rng, shape))
    return level * (1 + ar1(rng, n=shape.seconds, phi=shape.phi, sd=shape.second_cv))


def repeats(
    rng: np.random.Generator, *, tps: float, count: int, shape: RunShape, seed: int
) -> list[Repeat]:
    """`count` simulated repeats, summarised as the product does (benchhub.stats.repeats)."""
    made = []
    for i in range(count):
        samples = run_samples(rng, tps=tps, shape=shape)
        made.append(repeat(tps=float(samples.mean()), tps_samples=samples, seed=seed + i))
    return made


def history_means(
    rng: np.random.Generator, *, runs: int, per_run: int, shape: RunShape
) -> list[list[float]]:
    """A host's history: `runs` runs of `per_run` repeats each, one mean tps per repeat."""
    return [
        [float(run_samples(rng, tps=1000.0, shape=shape).mean()) for _ in range(per_run)]
        for _ in range(runs)
    ]


def step_series(
    rng: np.random.Generator,
    *,
    points: int,
    step_sigmas: float,
    noise_cv: float = 0.01,
    heavy_tails: bool = False,
    margin: int = 10,
) -> tuple[np.ndarray, int | None]:
    """A series of `points` run results around 1000 with noise `noise_cv` (relative sd), and a
    step of `step_sigmas` times the noise, up or down, at a random index at least `margin`
    from either end; (series, index of the first value after the step, None when flat)."""
    # Student's t with 3 dof has variance 3: scaled to the same sd as the Gaussian noise.
    noise = rng.standard_t(3, points) / np.sqrt(3) if heavy_tails else rng.standard_normal(points)
    values = 1000.0 * (1 + noise_cv * noise)
    if not step_sigmas:
        return values, None
    at = int(rng.integers(margin, points - margin))
    sign = 1 if rng.random() < 0.5 else -1
    values[at:] += sign * step_sigmas * noise_cv * 1000.0
    return values, at
