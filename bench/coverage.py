"""Do the verdicts' 95% intervals hold the true ratio 95% of the time? (docs/statistics.md)

    python -m bench.coverage [--trials 1000] [--seed 1] [--jobs N]

Each trial simulates three versions on one host (bench.simulate: AR(1) seconds, run-to-run
random effects): a baseline, a version 3% faster, and the baseline again. The interval of the
faster one against the baseline should hold 1.03 in 93-97% of trials (Wilson 95% interval of
that share printed beside it); the baseline against itself (A/A) should be called faster or
slower in about 5% of trials at most. For contrast, two intervals we do not use: a two-stage
percentile bootstrap (repeats resampled, then each repeat's within-run noise), and with one
repeat a side the within-run noise alone.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from bench.figures import Figure
from bench.simulate import RunShape, history_means, repeats
from benchhub.stats.noise import host_noise
from benchhub.stats.repeats import Repeat
from benchhub.stats.verdicts import Verdict, level_verdict

TRUE_RATIO = 1.03
BASE_TPS = 1000.0
HISTORY_RUNS, HISTORY_REPEATS = 10, 3
BOOTSTRAP_REPLICATES = 2000


@dataclass(frozen=True)
class Config:
    name: str
    repeats: int
    history: bool = False
    shape: RunShape = field(default_factory=RunShape)


CONFIGS = (
    Config("1 repeat a side, host history", 1, history=True),
    Config("1 repeat a side, no history", 1),
    Config("3 repeats a side", 3),
    Config("3 repeats a side, host history", 3, history=True),
    Config("5 repeats a side", 5),
    Config("3 repeats a side, heavy-tailed runs", 3, shape=RunShape(heavy_tails=True)),
)


@dataclass(frozen=True)
class Trial:
    covered: bool | None  # None: no interval
    width: float | None  # high / low - 1
    verdict: Verdict
    aa_verdict: Verdict
    contrast_covered: bool  # the interval we do not use


def trial(config: Config, seed: int) -> Trial:
    rng = np.random.default_rng([seed, config.repeats, int(config.history)])
    noise = None
    if config.history:
        history = history_means(rng, runs=HISTORY_RUNS, per_run=HISTORY_REPEATS, shape=config.shape)
        noise = host_noise(groups=history)
    made = [
        repeats(rng, tps=tps, count=config.repeats, shape=config.shape, seed=seed * 100 + 10 * i)
        for i, tps in enumerate((BASE_TPS, BASE_TPS * TRUE_RATIO, BASE_TPS))
    ]
    verdict = level_verdict(baseline=made[0], other=made[1], tps_noise=noise)
    aa = level_verdict(baseline=made[0], other=made[2], tps_noise=noise)
    low, high = verdict.tps.low, verdict.tps.high
    contrast = contrast_interval(rng, made[0], made[1])
    return Trial(
        covered=None if low is None or high is None else low <= TRUE_RATIO <= high,
        width=None if low is None or high is None else high / low - 1,
        verdict=verdict.verdict,
        aa_verdict=aa.verdict,
        contrast_covered=contrast[0] <= TRUE_RATIO <= contrast[1],
    )


def contrast_interval(
    rng: np.random.Generator, baseline: list[Repeat], other: list[Repeat]
) -> tuple[float, float]:
    """The 95% percentile interval of a two-stage bootstrap: resample the repeats, then draw
    each chosen repeat's mean from its within-run noise. With one repeat a side only the
    within-run noise is left."""

    def side_logs(side: list[Repeat]) -> np.ndarray:
        values = np.array([r.tps.value for r in side])
        errors = np.array([r.tps.within_se for r in side])
        picks = rng.integers(0, len(side), (BOOTSTRAP_REPLICATES, len(side)))
        draws = values[picks] + errors[picks] * rng.standard_normal(picks.shape)
        return np.log(draws).mean(axis=1)

    logs = side_logs(other) - side_logs(baseline)
    low, high = np.percentile(logs, [2.5, 97.5])
    return math.exp(low), math.exp(high)


def _run_chunk(config: Config, seeds: list[int]) -> list[Trial]:
    return [trial(config, seed) for seed in seeds]


def measure(config: Config, *, trials: int, seed: int, jobs: int) -> list[Trial]:
    seeds = [seed * 1_000_000 + i for i in range(trials)]
    if jobs <= 1:
        return _run_chunk(config, seeds)
    chunks = [seeds[i::jobs] for i in range(jobs)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        done = pool.map(_run_chunk, [config] * jobs, chunks)
    return [t for chunk in done for t in chunk]


@dataclass(frozen=True)
class Row:
    config: Config
    trials: int
    coverage: float | None  # share of intervals holding the true ratio
    coverage_low: float | None
    coverage_high: float | None
    median_width: float | None
    verdicts: dict[Verdict, float]  # share of trials per verdict, 3% faster version
    aa_differs: float  # share of A/A trials called faster or slower
    contrast: float


def summarise(config: Config, results: list[Trial]) -> Row:
    n = len(results)
    covered = [t.covered for t in results if t.covered is not None]
    coverage = low = high = width = None
    if covered:
        coverage = sum(covered) / len(covered)
        low, high = proportion_confint(sum(covered), len(covered), method="wilson")
        width = float(np.median([t.width for t in results if t.width is not None]))
    aa = sum(t.aa_verdict in (Verdict.FASTER, Verdict.SLOWER) for t in results) / n
    return Row(
        config=config,
        trials=n,
        coverage=coverage,
        coverage_low=low,
        coverage_high=high,
        median_width=width,
        verdicts={v: sum(t.verdict is v for t in results) / n for v in Verdict},
        aa_differs=aa,
        contrast=sum(t.contrast_covered for t in results) / n,
    )


def coverage_bench(*, trials: int = 1000, seed: int = 1, jobs: int = 1) -> list[Row]:
    rows = []
    for config in CONFIGS:
        started = time.monotonic()
        rows.append(summarise(config, measure(config, trials=trials, seed=seed, jobs=jobs)))
        print(
            f"coverage: {config.name}: {time.monotonic() - started:.0f} s",
            file=sys.stderr,
            flush=True,
        )
    return rows


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def table(rows: list[Row]) -> str:
    lines = [
        "| configuration | trials | coverage (Wilson 95%) | median width | faster / slower / "
        "same / inconclusive (true +3%) | A/A called different | two-stage percentile "
        "bootstrap coverage |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        coverage = "no interval"
        if row.coverage is not None:
            coverage = f"{_pct(row.coverage)} ({_pct(row.coverage_low)}-{_pct(row.coverage_high)})"
        verdicts = " / ".join(_pct(row.verdicts[v]) for v in Verdict)
        lines.append(
            f"| {row.config.name} | {row.trials} | {coverage} | {_pct(row.median_width)} | "
            f"{verdicts} | {_pct(row.aa_differs)} | {_pct(row.contrast)} |"
        )
    return "\n".join(lines)


def figures(rows: list[Row]) -> list[Figure]:
    """Coverage per configuration with its Wilson interval, against the 93-97% band."""
    made = []
    for row in rows:
        if row.coverage is None:
            inconclusive = row.verdicts[Verdict.INCONCLUSIVE] * 100
            made.append(
                Figure(
                    "statistics",
                    f"inconclusive, {row.config.name}",
                    inconclusive,
                    "%",
                    op=">=",
                    target=100.0,
                    exact=True,
                    note="no interval: every trial must be inconclusive",
                )
            )
            continue
        made.append(
            Figure(
                "statistics",
                f"coverage, {row.config.name}",
                row.coverage * 100,
                "%",
                op="within",
                target=93.0,
                target_high=97.0,
                low=None if row.coverage_low is None else row.coverage_low * 100,
                high=None if row.coverage_high is None else row.coverage_high * 100,
                note=f"Wilson 95% interval of the share of {row.trials} trials; "
                f"A/A called different {_pct(row.aa_differs)}",
            )
        )
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.coverage", description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    print(table(coverage_bench(trials=args.trials, seed=args.seed, jobs=args.jobs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
