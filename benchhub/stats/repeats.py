"""What one pgbench repeat contributes to a verdict: its mean, and how precisely its per-second
samples pin that mean down. Pure code (numpy, arch), no Django.

A repeat's value is the mean of its steady-state per-second progress samples (`-P 1`, after the
warm-up the caller cut off), or pgbench's overall figure when it has too few samples. The
within-run standard error of that mean comes from a circular block bootstrap of the samples
(arch), with the block length chosen by Politis and White's method (arch's
`optimal_block_length`): neighbouring seconds of a pgbench run are correlated (checkpoints,
autovacuum, the OS page cache), so resampling single seconds would understate it.

The within-run error depends on one result only, so it can be computed once per result and
stored; `verdicts.level_verdict` takes the finished `RunMean`s.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from arch.bootstrap import CircularBlockBootstrap, optimal_block_length

# Fewer steady-state seconds than this do not make a mean worth preferring to pgbench's own
# overall figure, nor a block bootstrap worth running.
MIN_SECONDS = 10
WITHIN_REPLICATES = 200
# The warm-up left out of a run's per-second samples: the first tenth of the run, at least 2 s
# (connections, the first reads into shared buffers) and at most 60 s.
WARMUP_FRACTION = 0.1
WARMUP_MIN_S = 2.0
WARMUP_MAX_S = 60.0


@dataclass(frozen=True)
class RunMean:
    """One repeat's value of one metric (tps, or latency in ms).

    `value` is the mean of `seconds` steady-state samples, or pgbench's overall figure when
    `seconds` is 0; `within_se` is the standard error of `value` from the per-second samples
    alone (0 without samples); `block` the bootstrap's block length in seconds.
    """

    value: float
    within_se: float = 0.0
    seconds: int = 0
    block: int = 0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.value) and self.value > 0):
            raise ValueError(f"a repeat's value must be a positive number, got {self.value!r}")
        if not (math.isfinite(self.within_se) and self.within_se >= 0):
            raise ValueError(f"within_se must be a number >= 0, got {self.within_se!r}")

    @property
    def log_within_var(self) -> float:
        """Variance of log(value) from within the run (delta method)."""
        return (self.within_se / self.value) ** 2


@dataclass(frozen=True)
class Repeat:
    """One repeat at one client level: its tps and, when known, its mean latency.

    `run` names the run (one job's series: one cluster, one data load, one hour) the repeat
    belongs to; repeats of one run share that run's effect, so the verdicts take run means as
    their unit (verdicts.ratio). None: a run of its own.

    `pair` names the moment the repeat was measured at, shared with the other versions' repeats
    measured right beside it (the same job and attempt on the same host, the same level and
    repeat, the versions in turn): a drift of the host falls on both of a pair alike, so the
    verdicts compare pairs when every repeat of both sides has its partner (verdicts.ratio).
    None: nothing was measured beside it that is known.
    """

    tps: RunMean
    latency: RunMean | None = None
    run: int | None = None
    pair: Hashable | None = None


def run_mean(
    *,
    overall: float | None,
    samples: Sequence[float] | np.ndarray = (),
    seed: int = 0,
    replicates: int = WITHIN_REPLICATES,
) -> RunMean:
    """The RunMean of one repeat from its steady-state per-second `samples` (same unit as
    `overall`), falling back to `overall` (pgbench's figure for the whole run) when there are
    fewer than MIN_SECONDS samples. Deterministic for a given seed. With `replicates` 0 the
    block bootstrap (the slow part) is left out: `within_se` and `block` are 0 until it runs.

    Raises ValueError for a non-finite sample, or when neither gives a positive value.
    """
    values = np.asarray(samples, dtype=float)
    if values.size and not np.all(np.isfinite(values)):
        raise ValueError("per-second samples must be finite numbers")
    if values.size < MIN_SECONDS:
        if overall is None:
            raise ValueError(f"need pgbench's overall figure or {MIN_SECONDS} per-second samples")
        return RunMean(value=float(overall))
    mean = float(values.mean())
    if np.ptp(values) == 0:
        return RunMean(value=mean, seconds=int(values.size), block=1)
    if replicates == 0:
        return RunMean(value=mean, seconds=int(values.size))
    block = block_length(values)
    bootstrap = CircularBlockBootstrap(block, values, seed=np.random.default_rng(seed))
    means = bootstrap.apply(np.mean, replicates)
    return RunMean(
        value=mean,
        within_se=float(np.std(means, ddof=1)),
        seconds=int(values.size),
        block=block,
    )


def warmup_s(duration_s: float) -> float:
    """Seconds at the start of a run of `duration_s` seconds that count as warm-up."""
    return min(WARMUP_MAX_S, max(WARMUP_MIN_S, WARMUP_FRACTION * duration_s))


def steady_state(
    samples: Sequence[tuple[float, float | None]], *, duration_s: float | None = None
) -> list[float]:
    """The values of the (t, value) progress samples after the warm-up (`t` is the end of each
    second's interval, as pgbench's `-P` prints it), in time order, without missing values.
    `duration_s` defaults to the last sample's t (a run given as a transaction count)."""
    ordered = sorted((t, v) for t, v in samples if v is not None)
    if not ordered:
        return []
    cut = warmup_s(duration_s if duration_s else ordered[-1][0])
    return [v for t, v in ordered if t > cut]


def steady_window(
    t: Sequence[float], values: Sequence[float | None], *, duration_s: float | None = None
) -> np.ndarray:
    """steady_state of samples given as two lists in time order (`t` strictly increasing, as an
    upload's progress is stored): the same values in the same order, found by array operations
    instead of a tuple per sample (an upload's thousands of samples, bench/ ingest)."""
    times = np.asarray(t, dtype=float)
    # None becomes NaN here; a sample's value is never NaN itself (uploads refuse it).
    measured = np.asarray(values, dtype=float)
    present = ~np.isnan(measured)
    if not present.any():
        return measured[:0]
    cut = warmup_s(duration_s if duration_s else float(times[present][-1]))
    return measured[present & (times > cut)]


def block_length(values: np.ndarray) -> int:
    """Politis-White block length for a circular block bootstrap of the mean, in samples,
    rounded up and kept between 1 and a third of the series (a longer block leaves too few
    blocks to resample)."""
    estimate = float(optimal_block_length(values)["circular"].iloc[0])
    if not math.isfinite(estimate):
        estimate = 1.0
    return max(1, min(math.ceil(estimate), values.size // 3))


def repeat(
    *,
    tps: float | None,
    tps_samples: Sequence[float] | np.ndarray = (),
    latency_ms: float | None = None,
    latency_samples: Sequence[float] | np.ndarray = (),
    seed: int = 0,
    replicates: int = WITHIN_REPLICATES,
) -> Repeat:
    """A Repeat from what pgbench reports: overall tps and latency (ms), and the per-second
    samples of the steady-state window. Latency is left out when neither is given.
    `replicates`: of each mean's block bootstrap (0: none, see run_mean)."""
    has_latency = latency_ms is not None or len(latency_samples) >= MIN_SECONDS
    return Repeat(
        tps=run_mean(overall=tps, samples=tps_samples, seed=seed, replicates=replicates),
        latency=(
            run_mean(
                overall=latency_ms, samples=latency_samples, seed=seed + 1, replicates=replicates
            )
            if has_latency
            else None
        ),
    )
