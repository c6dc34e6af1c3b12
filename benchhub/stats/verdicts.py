"""Verdicts you can trust: is one version faster than the baseline at a client level, and over
the whole curve. Pure code (numpy, scipy), no Django; docs/statistics.md explains the
method for readers of the page.

Per level, each repeat is one number: the mean of its steady-state per-second samples (see
`repeats`). The ratio of the two versions' mean tps is estimated on the log scale. Repeats inside
one run share its cluster, data load and hour, runs do not: the variation between runs is a level
of its own, which the repeats of one run cannot see. So the unit is the run:

- with more than one run on a side, each run counts as the mean of the logs of its repeats, and
  the 95% interval is Student's pooled t interval over the run means of both sides (the variance
  of a run mean holds both levels, between runs and between the repeats inside them);
- when every repeat is a run of its own, or each side is a single run, the repeats are the
  units, with a pooled Student's t interval over the repeats of both sides. With one run a
  side this sees only the variation inside one job, and the Ratio says so (`unit`);
- but when each side is one run of the same job and every repeat was measured beside its
  partner on the other side (`Repeat.pair`: same job and attempt, host, level and repeat, the
  versions in turn), the pairs are the units: the ratio of each pair, their geometric mean and
  Student's t interval over the pairs (n - 1 degrees of freedom). A drift of the host between
  repeats moves both of a pair alike and drops out of their ratio, where the pooled interval
  counts it as noise on both sides. Like the repeats of one run, the pairs of one job do not
  see the variation between jobs.

For repeats as units:

- the run-to-run variation is the pooled variance of log(tps) between the repeats of each side,
  pooled further with the host's history (`noise.HostNoise`) when given, unless these runs vary
  significantly more than that history (F test at 1 %), in which case the history is set aside;
- it is never taken below the variance of a run's mean that its own per-second samples show
  (block bootstrap), since two runs cannot agree better than each is measured;
- with one repeat a side and no history, the run-to-run variation is unknown: no interval, and
  the verdict is inconclusive.

The verdict reads the interval: `same` when it lies inside +-threshold (two one-sided tests at
2.5 % each), else `faster` or `slower` when it excludes 1, else `inconclusive`. With three
repeats a side a rank test cannot reach p < 0.05, which is why the verdict is not a bare test;
Mann-Whitney's p and Cliff's delta are added from four repeats a side, as information.

Over the curve, the geometric mean of the level ratios gets an interval and a verdict of its
own: with runs as units when every run measured every level (a run's levels share its cluster,
so their errors move together), else treating the levels as independent measurements. Holm's
correction is applied to both families of p-values (difference and sameness) over the levels
and the geometric mean together, before counting: a curve is called different when any of them
is, so a version compared with itself is called different on its whole curve at most 5% of the
time, however the levels move together (Holm holds under any dependence). With one level the
geometric mean is that level.

Student's t and Fisher's F probabilities are scipy.special's `stdtr`, `stdtrit` and `fdtrc`: the
functions scipy.stats' `t` and `f` distributions evaluate, called without their argument
checking, which cost some 70 us a call, about as much as a whole level's arithmetic.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from scipy.special import fdtrc, stdtr, stdtrit
from scipy.stats import mannwhitneyu

from benchhub.stats.noise import HostNoise, repeats_needed
from benchhub.stats.repeats import Repeat, RunMean

ALPHA = 0.05
DEFAULT_THRESHOLD = 0.02
# Below this p, the compared runs vary more than the host's history says it does: something
# differs today (a noisy neighbour), and pooling with the history would hide it.
HISTORY_MISMATCH_P = 0.01
RANK_TEST_REPEATS = 4
# Pairs give an interval from two on (one degree of freedom); fewer leave the repeats unpaired.
MIN_PAIRS = 2


class Verdict(StrEnum):
    FASTER = "faster"
    SLOWER = "slower"
    SAME = "same"
    INCONCLUSIVE = "inconclusive"


class Unit(StrEnum):
    """What an interval took as its independent units."""

    RUNS = "run_means"  # run means, or repeats that are each a run of their own
    REPEATS = "repeats_in_one_job"  # one run a side: the variation between runs is not seen
    PAIRS = "pairs_in_one_job"  # one job, repeats measured side by side: paired, same caveat


class History(StrEnum):
    """What became of the host's noise estimate in an interval."""

    NOT_GIVEN = "not given"
    USED = "used"
    SET_ASIDE = "set aside"


@dataclass(frozen=True)
class Ratio:
    """other / baseline of one metric at one level, and its 95% interval.

    `low`/`high` are None when the run-to-run variation is unknown (one repeat a side and no
    history). `cv` is the run-to-run variation used (standard deviation of log of one unit's
    value: a run mean, or a repeat), `within_cv` the part of it the per-second samples show,
    `dof` the degrees of freedom of the t interval, `log_se` the standard error of log(value);
    `unit` what the interval counted as independent, `runs` the runs a side (baseline, other).
    With pairs as units (`Unit.PAIRS`) `cv` and `within_cv` are stated per side: the variance
    of a pair's log ratio over 2, what one side's variation would be if the two sides varied
    alike and apart; so the pairs' standard error is `cv * sqrt(2 / pairs)`, as the pooled
    interval's is with as many repeats a side.
    """

    value: float
    low: float | None
    high: float | None
    log_se: float | None
    dof: float | None
    cv: float | None
    within_cv: float
    history: History
    unit: Unit = Unit.RUNS
    runs: tuple[int, int] = (0, 0)

    @property
    def log_value(self) -> float:
        return math.log(self.value)

    @property
    def one_job(self) -> bool:
        """Whether the interval sees only the variation inside one job (one run a side)."""
        return self.unit in (Unit.REPEATS, Unit.PAIRS)

    @property
    def paired(self) -> bool:
        return self.unit is Unit.PAIRS


@dataclass(frozen=True)
class LevelVerdict:
    """One version against the baseline at one client level.

    `tps` decides the verdict; `latency` is reported beside it (None unless every repeat has
    one). `p_difference` is the two-sided p of "the ratio is 1", `p_same` that of "the ratio is
    outside +-threshold" (None with an unknown variation); `repeats` is (baseline, other);
    `repeats_needed` (per side) is set for an inconclusive level when it can be estimated.
    What it was made of, for the words that explain it (compare.verdict_text): `seconds` and
    `blocks` are each repeat's steady-state seconds and bootstrap block (s; 0 when unknown),
    baseline first; `noise` the host's history given for tps. `run_logs` maps each side's runs
    to the mean log tps of their repeats here, when every repeat names its run: the geometric
    mean over levels takes runs as its units with it (`curve_verdict`).
    """

    verdict: Verdict
    tps: Ratio
    latency: Ratio | None
    threshold: float
    p_difference: float | None
    p_same: float | None
    repeats: tuple[int, int]
    mann_whitney_p: float | None
    cliffs_delta: float | None
    repeats_needed: int | None
    seconds: tuple[int, ...] = ()
    blocks: tuple[int, ...] = ()
    noise: HostNoise | None = None
    run_logs: tuple[dict[Hashable, float], dict[Hashable, float]] | None = None


@dataclass(frozen=True)
class CurveVerdict:
    """A version against the baseline over all compared client levels, after Holm.

    `levels` maps clients to the corrected verdict; `counts` has a key per Verdict value;
    `geomean` is the geometric mean of the tps ratios, `low`/`high` its 95% interval (None when
    a level's variation is unknown) and `verdict` its corrected verdict; `threshold` the levels'
    practical threshold.
    """

    levels: dict[int, Verdict]
    counts: dict[Verdict, int]
    geomean: float | None
    low: float | None
    high: float | None
    threshold: float = DEFAULT_THRESHOLD
    verdict: Verdict = Verdict.INCONCLUSIVE

    @property
    def called(self) -> bool:
        """Whether anything on the curve is called faster or slower: a level or the geometric
        mean. One family under Holm, so at most ALPHA of A/A curves."""
        moved = (Verdict.FASTER, Verdict.SLOWER)
        return self.verdict in moved or any(self.counts[v] for v in moved)


def level_verdict(
    *,
    baseline: Sequence[Repeat],
    other: Sequence[Repeat],
    threshold: float = DEFAULT_THRESHOLD,
    tps_noise: HostNoise | None = None,
    latency_noise: HostNoise | None = None,
    rank: tuple[float | None, float | None] | None = None,
) -> LevelVerdict:
    """The verdict on `other` against `baseline` at one client level, from their repeats.

    `threshold` is the practical difference under which two versions are the same (0.02 = 2 %);
    `tps_noise`/`latency_noise` the host's run-to-run variation for this workload and level,
    from its history (noise.host_noise), pooled in when given. `rank`: the Mann-Whitney p and
    Cliff's delta of these sides already computed (level_verdicts), else computed here.

    Raises ValueError without a repeat on either side or with a threshold outside (0, 1).
    """
    if not baseline or not other:
        raise ValueError("need at least one repeat on each side")
    if not 0 < threshold < 1:
        raise ValueError(f"threshold must be between 0 and 1, got {threshold!r}")
    pairs = repeat_pairs(baseline, other)
    if pairs is not None:
        baseline, other = [b for b, _ in pairs], [o for _, o in pairs]
    runs = ([r.run for r in baseline], [r.run for r in other])
    if pairs is not None:
        tps = paired_ratio([r.tps for r in baseline], [r.tps for r in other])
    else:
        tps = ratio([r.tps for r in baseline], [r.tps for r in other], noise=tps_noise, runs=runs)
    latency = None
    if all(r.latency for r in (*baseline, *other)):
        base_latency = [r.latency for r in baseline if r.latency]
        other_latency = [r.latency for r in other if r.latency]
        if pairs is not None:
            latency = paired_ratio(base_latency, other_latency)
        else:
            latency = ratio(base_latency, other_latency, noise=latency_noise, runs=runs)
    p_difference, p_same = _p_values(tps, threshold)
    verdict = verdict_from(
        p_difference=p_difference, p_same=p_same, log_ratio=tps.log_value, alpha=ALPHA
    )
    if rank is None:
        rank = _rank_test([r.tps.value for r in baseline], [r.tps.value for r in other])
    rank_p, delta = rank
    needed = None
    if verdict is Verdict.INCONCLUSIVE and tps.cv is not None:
        prior = tps_noise.dof if tps_noise and tps.history is History.USED else 0
        needed = repeats_needed(
            log_ratio=tps.log_value,
            cv=tps.cv,
            threshold=threshold,
            prior_dof=prior,
            paired=tps.paired,
        )
    return LevelVerdict(
        verdict=verdict,
        tps=tps,
        latency=latency,
        threshold=threshold,
        p_difference=p_difference,
        p_same=p_same,
        repeats=(len(baseline), len(other)),
        mann_whitney_p=rank_p,
        cliffs_delta=delta,
        repeats_needed=needed,
        seconds=tuple(r.tps.seconds for r in (*baseline, *other)),
        blocks=tuple(r.tps.block for r in (*baseline, *other)),
        noise=tps_noise,
        run_logs=_run_logs(baseline, other),
    )


def level_verdicts(
    *,
    sides: Mapping[int, tuple[Sequence[Repeat], Sequence[Repeat]]],
    threshold: float = DEFAULT_THRESHOLD,
    tps_noise: Mapping[int, HostNoise | None] | None = None,
) -> dict[int, LevelVerdict]:
    """level_verdict at each client level of `sides` (clients -> (baseline, other) repeats),
    with `tps_noise` per level: the same verdicts, their Mann-Whitney tests made together
    (rank_tests), one scipy call per size of sample rather than one per level."""
    samples = []
    for baseline, other in sides.values():
        pairs = repeat_pairs(baseline, other) if baseline and other else None
        if pairs is not None:
            baseline, other = [b for b, _ in pairs], [o for _, o in pairs]
        samples.append(([r.tps.value for r in baseline], [r.tps.value for r in other]))
    noise = tps_noise or {}
    return {
        clients: level_verdict(
            baseline=baseline,
            other=other,
            threshold=threshold,
            tps_noise=noise.get(clients),
            rank=rank,
        )
        for (clients, (baseline, other)), rank in zip(
            sides.items(), rank_tests(samples), strict=True
        )
    }


def repeat_pairs(
    baseline: Sequence[Repeat], other: Sequence[Repeat]
) -> list[tuple[Repeat, Repeat]] | None:
    """The repeats of both sides matched by their `pair` (baseline first, in the baseline's
    order); None unless each side is one run, every repeat has exactly one partner on the other
    side and there are at least MIN_PAIRS pairs. Several runs a side (pooled jobs) are left to
    run means: there the variation between jobs decides, which pairs inside a job do not see."""
    keys = [r.pair for r in baseline], [r.pair for r in other]
    if len(baseline) < MIN_PAIRS or any(k is None for side in keys for k in side):
        return None
    if any(len(set(side)) != len(side) for side in keys) or set(keys[0]) != set(keys[1]):
        return None
    if len({r.run for r in baseline}) != 1 or len({r.run for r in other}) != 1:
        return None
    partner = {r.pair: r for r in other}
    return [(r, partner[r.pair]) for r in baseline]


def paired_ratio(baseline: Sequence[RunMean], other: Sequence[RunMean]) -> Ratio:
    """other / baseline from pairs measured side by side (`baseline[i]` beside `other[i]`): the
    geometric mean of the pairs' ratios and Student's t interval over the pairs as units
    (n - 1 degrees of freedom). The variance of a pair's log ratio is never taken below what the
    per-second samples of its two repeats show. `cv` and `within_cv` are per side (see Ratio).

    Raises ValueError unless both sides have the same number of values, at least MIN_PAIRS.
    """
    if len(baseline) != len(other) or len(baseline) < MIN_PAIRS:
        raise ValueError(f"need as many values a side, at least {MIN_PAIRS}")
    logs = np.log([m.value for m in other]) - np.log([m.value for m in baseline])
    count = len(logs)
    log_ratio = float(logs.mean())
    within = float(
        np.mean([b.log_within_var + o.log_within_var for b, o in zip(baseline, other, strict=True)])
    )
    pair_var = max(float(np.sum((logs - log_ratio) ** 2)) / (count - 1), within)
    log_se = math.sqrt(pair_var / count)
    half = float(stdtrit(count - 1, 1 - ALPHA / 2)) * log_se
    return Ratio(
        value=math.exp(log_ratio),
        low=math.exp(log_ratio - half),
        high=math.exp(log_ratio + half),
        log_se=log_se,
        dof=float(count - 1),
        cv=math.sqrt(pair_var / 2),
        within_cv=math.sqrt(within / 2),
        history=History.NOT_GIVEN,
        unit=Unit.PAIRS,
        runs=(1, 1),
    )


def _run_logs(
    baseline: Sequence[Repeat], other: Sequence[Repeat]
) -> tuple[dict[Hashable, float], dict[Hashable, float]] | None:
    """Each side's runs -> the mean log tps of their repeats; None unless every repeat names
    its run."""
    if any(r.run is None for r in (*baseline, *other)):
        return None
    sides = []
    for repeats in (baseline, other):
        logs: dict[Hashable, list[float]] = {}
        for r in repeats:
            logs.setdefault(r.run, []).append(math.log(r.tps.value))
        sides.append({run: float(np.mean(values)) for run, values in logs.items()})
    return sides[0], sides[1]


def ratio(
    baseline: Sequence[RunMean],
    other: Sequence[RunMean],
    *,
    noise: HostNoise | None = None,
    runs: tuple[Sequence[Hashable | None], Sequence[Hashable | None]] | None = None,
) -> Ratio:
    """other / baseline of the mean values, with the t interval described above.

    `runs` names each value's run, in the order of `baseline` and `other` (None, or a None in
    it: a run of its own). Unless every value is a run of its own or each side is one run, the
    run means are the units and `noise` (a history of repeats, not of runs) is not used.
    """
    base_runs, other_runs = runs or ((None,) * len(baseline), (None,) * len(other))
    base_groups = _run_groups(baseline, base_runs)
    other_groups = _run_groups(other, other_runs)
    count = (len(base_groups), len(other_groups))
    singletons = count == (len(baseline), len(other))
    if singletons or count == (1, 1):
        found = _repeats_ratio(baseline, other, noise=noise)
        unit = Unit.RUNS if singletons else Unit.REPEATS
        return dataclasses.replace(found, unit=unit, runs=count)
    return _run_means_ratio(base_groups, other_groups)


def _run_groups(values: Sequence[RunMean], runs: Sequence[Hashable | None]) -> list[list[RunMean]]:
    """The values grouped by run, in first-seen order; a None run is a group of its own."""
    if len(runs) != len(values):
        raise ValueError("runs must name the run of every value")
    groups: dict[Hashable, list[RunMean]] = {}
    for index, (value, run) in enumerate(zip(values, runs, strict=True)):
        groups.setdefault(("own", index) if run is None else ("run", run), []).append(value)
    return list(groups.values())


def _run_means_ratio(
    baseline: Sequence[Sequence[RunMean]], other: Sequence[Sequence[RunMean]]
) -> Ratio:
    """Student's pooled t interval over run means (each the mean log of a run's repeats). The
    variance of a run mean is never taken below what the per-second samples of its repeats
    show about it (their within-run variance over the number of repeats)."""
    base_means = np.array([np.mean(np.log([m.value for m in run])) for run in baseline])
    other_means = np.array([np.mean(np.log([m.value for m in run])) for run in other])
    log_ratio = float(other_means.mean() - base_means.mean())
    squares = float(np.sum((base_means - base_means.mean()) ** 2))
    squares += float(np.sum((other_means - other_means.mean()) ** 2))
    dof = len(base_means) + len(other_means) - 2
    within = float(
        np.mean(
            [np.mean([m.log_within_var for m in run]) / len(run) for run in (*baseline, *other)]
        )
    )
    return _t_ratio(
        log_ratio,
        squares=squares,
        dof=dof,
        within=within,
        sizes=(len(base_means), len(other_means)),
        history=History.NOT_GIVEN,
        runs=(len(base_means), len(other_means)),
    )


def _repeats_ratio(
    baseline: Sequence[RunMean], other: Sequence[RunMean], *, noise: HostNoise | None
) -> Ratio:
    """The pooled t interval over repeats as units, with the host's history."""
    base_logs = np.log([m.value for m in baseline])
    other_logs = np.log([m.value for m in other])
    log_ratio = float(other_logs.mean() - base_logs.mean())
    squares = float(np.sum((base_logs - base_logs.mean()) ** 2))
    squares += float(np.sum((other_logs - other_logs.mean()) ** 2))
    dof = len(base_logs) + len(other_logs) - 2
    history = History.NOT_GIVEN
    if noise is not None:
        history = History.USED
        if dof and _varies_more(squares / dof, dof, noise):
            history = History.SET_ASIDE
        else:
            squares += noise.dof * noise.cv**2
            dof += noise.dof
    within = float(np.mean([m.log_within_var for m in (*baseline, *other)]))
    if dof == 0:
        return Ratio(math.exp(log_ratio), None, None, None, None, None, math.sqrt(within), history)
    return _t_ratio(
        log_ratio,
        squares=squares,
        dof=dof,
        within=within,
        sizes=(len(base_logs), len(other_logs)),
        history=history,
    )


def _t_ratio(
    log_ratio: float,
    *,
    squares: float,
    dof: int,
    within: float,
    sizes: tuple[int, int],
    history: History,
    runs: tuple[int, int] = (0, 0),
) -> Ratio:
    """Student's pooled t interval of the ratio from the pooled sum of squares of `sizes`
    units a side, its variance never below what the per-second samples show (`within`)."""
    run_var = max(squares / dof, within)
    log_se = math.sqrt(run_var * (1 / sizes[0] + 1 / sizes[1]))
    half = float(stdtrit(dof, 1 - ALPHA / 2)) * log_se
    return Ratio(
        value=math.exp(log_ratio),
        low=math.exp(log_ratio - half),
        high=math.exp(log_ratio + half),
        log_se=log_se,
        dof=float(dof),
        cv=math.sqrt(run_var),
        within_cv=math.sqrt(within),
        history=history,
        runs=runs,
    )


def _varies_more(observed_var: float, dof: int, noise: HostNoise) -> bool:
    if noise.cv == 0:
        return observed_var > 0
    return fdtrc(dof, noise.dof, observed_var / noise.cv**2) < HISTORY_MISMATCH_P


def _p_values(tps: Ratio, threshold: float) -> tuple[float | None, float | None]:
    """Two-sided p of "no difference", and p of "a difference beyond the threshold" from two
    one-sided tests, doubled so that p_same < 0.05 exactly when the 95% interval fits inside."""
    if tps.log_se is None or tps.dof is None:
        return None, None
    if tps.log_se == 0:
        inside = math.log1p(-threshold) < tps.log_value < math.log1p(threshold)
        return (1.0 if tps.log_value == 0 else 0.0), (0.0 if inside else 1.0)
    log_ratio, se, dof = tps.log_value, tps.log_se, tps.dof
    p_difference = float(2 * stdtr(dof, -abs(log_ratio) / se))
    above_low = stdtr(dof, -(log_ratio - math.log1p(-threshold)) / se)
    below_high = stdtr(dof, (log_ratio - math.log1p(threshold)) / se)
    return p_difference, float(min(1.0, 2 * max(above_low, below_high)))


def verdict_from(
    *, p_difference: float | None, p_same: float | None, log_ratio: float, alpha: float
) -> Verdict:
    """The verdict from (possibly Holm-adjusted) p-values: same wins over a difference too
    small to matter."""
    if p_same is not None and p_same < alpha:
        return Verdict.SAME
    if p_difference is not None and p_difference < alpha:
        return Verdict.FASTER if log_ratio > 0 else Verdict.SLOWER
    return Verdict.INCONCLUSIVE


def _rank_test(
    baseline: Sequence[float], other: Sequence[float]
) -> tuple[float | None, float | None]:
    """Mann-Whitney's two-sided p and Cliff's delta (P(other > base) - P(other < base), from
    the U statistic), with at least RANK_TEST_REPEATS repeats a side."""
    if min(len(baseline), len(other)) < RANK_TEST_REPEATS:
        return None, None
    result = mannwhitneyu(other, baseline, alternative="two-sided")
    delta = 2 * float(result.statistic) / (len(other) * len(baseline)) - 1
    return float(result.pvalue), delta


def rank_tests(
    samples: Sequence[tuple[Sequence[float], Sequence[float]]],
) -> list[tuple[float | None, float | None]]:
    """_rank_test of each (baseline, other) in `samples`, the samples of one size and with or
    without ties tested in one call along an axis: scipy picks its exact or asymptotic method
    from the sizes and from ties anywhere in the call, so grouping so keeps each p what a call
    of its own gives, at a seventh of the cost for nine levels."""
    found: list[tuple[float | None, float | None]] = [(None, None)] * len(samples)
    groups: dict[tuple[int, int, bool], list[int]] = {}
    for index, (baseline, other) in enumerate(samples):
        if min(len(baseline), len(other)) < RANK_TEST_REPEATS:
            continue
        ties = len(set(baseline) | set(other)) < len(baseline) + len(other)
        groups.setdefault((len(baseline), len(other), ties), []).append(index)
    for (n_base, n_other, _), indices in groups.items():
        result = mannwhitneyu(
            np.array([samples[i][1] for i in indices]),
            np.array([samples[i][0] for i in indices]),
            alternative="two-sided",
            axis=-1,
        )
        for statistic, pvalue, index in zip(
            np.atleast_1d(result.statistic), np.atleast_1d(result.pvalue), indices, strict=True
        ):
            found[index] = (float(pvalue), 2 * float(statistic) / (n_other * n_base) - 1)
    return found


def curve_verdict(*, levels: Mapping[int, LevelVerdict]) -> CurveVerdict:
    """The verdict over a curve from its levels' verdicts (clients -> LevelVerdict): Holm's
    correction over the levels and the geometric mean, the counts, and the geometric-mean ratio.

    Raises ValueError without levels or when their thresholds differ.
    """
    if not levels:
        raise ValueError("need at least one level")
    thresholds = {v.threshold for v in levels.values()}
    if len(thresholds) > 1:
        raise ValueError("the levels of one curve must share their threshold")
    threshold = thresholds.pop()
    mean = _run_geomean(levels) or levels_geomean([v.tps for v in levels.values()])
    corrected, overall = _holm(levels, mean, threshold)
    counts = {v: 0 for v in Verdict}
    for verdict in corrected.values():
        counts[verdict] += 1
    return CurveVerdict(
        levels=corrected,
        counts=counts,
        geomean=mean.value,
        low=mean.low,
        high=mean.high,
        threshold=threshold,
        verdict=overall,
    )


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values, in the order given: exactly statsmodels'
    `multipletests(method="holm")[1]` (a test checks it), without the full garbage collection
    statsmodels runs on every call (0.4 s in a busy web process, twice per compared version)."""
    values = np.asarray(pvalues, dtype=float)
    order = np.argsort(values)
    steps = values[order] * np.arange(len(values), 0, -1)
    adjusted = np.empty_like(values)
    adjusted[order] = np.minimum(np.maximum.accumulate(steps), 1.0)
    return adjusted


def _holm(
    levels: Mapping[int, LevelVerdict], mean: Ratio, threshold: float
) -> tuple[dict[int, Verdict], Verdict]:
    """The levels' verdicts and the geometric mean's, from one Holm family per kind of p-value.
    With one level the geometric mean is the same test as the level, so it is not counted
    twice."""
    tested = sorted(c for c, v in levels.items() if v.p_difference is not None)
    corrected = {c: Verdict.INCONCLUSIVE for c in levels}
    if not tested:
        return corrected, Verdict.INCONCLUSIVE
    p_mean = _p_values(mean, threshold) if len(levels) > 1 else (None, None)
    with_mean = p_mean[0] is not None and p_mean[1] is not None
    families = []
    for index, name in enumerate(("p_difference", "p_same")):
        pvalues = [getattr(levels[c], name) for c in tested]
        families.append(holm(pvalues + ([p_mean[index]] if with_mean else [])))
    for position, clients in enumerate(tested):
        corrected[clients] = verdict_from(
            p_difference=float(families[0][position]),
            p_same=float(families[1][position]),
            log_ratio=levels[clients].tps.log_value,
            alpha=ALPHA,
        )
    if len(levels) == 1:
        return corrected, corrected[tested[0]]
    if not with_mean:
        return corrected, Verdict.INCONCLUSIVE
    overall = verdict_from(
        p_difference=float(families[0][-1]),
        p_same=float(families[1][-1]),
        log_ratio=mean.log_value,
        alpha=ALPHA,
    )
    return corrected, overall


def _run_geomean(levels: Mapping[int, LevelVerdict]) -> Ratio | None:
    """The geometric mean with runs as units: each run's mean log tps over the levels, then
    Student's pooled t interval over those run means, as `ratio` does for one level. The levels
    of one run share its cluster, data load and hour, so their errors move together, which an
    interval over independent levels would not see. None unless every run of each side has
    every level, and each side at least two runs."""
    if len(levels) < 2 or any(v.run_logs is None for v in levels.values()):
        return None
    sides = []
    for side in (0, 1):
        logs = [v.run_logs[side] for v in levels.values() if v.run_logs is not None]
        runs = set(logs[0])
        if len(runs) < 2 or any(set(level) != runs for level in logs):
            return None
        sides.append(np.array([np.mean([level[run] for level in logs]) for run in runs]))
    base, other = sides
    squares = float(np.sum((base - base.mean()) ** 2) + np.sum((other - other.mean()) ** 2))
    within = float(np.mean([v.tps.within_cv**2 for v in levels.values()])) / len(levels)
    return _t_ratio(
        float(other.mean() - base.mean()),
        squares=squares,
        dof=len(base) + len(other) - 2,
        within=within,
        sizes=(len(base), len(other)),
        history=History.NOT_GIVEN,
        runs=(len(base), len(other)),
    )


def levels_geomean(ratios: Sequence[Ratio]) -> Ratio:
    """Geometric mean of the ratios, and its 95% t interval with Welch-Satterthwaite degrees of
    freedom, treating each level as an independent measurement (low, high, log_se and dof None
    when a level's variation is unknown)."""
    n = len(ratios)
    log_mean = sum(r.log_value for r in ratios) / n
    value = math.exp(log_mean)
    unknown = Ratio(value, None, None, None, None, None, 0.0, History.NOT_GIVEN)
    if any(r.log_se is None or r.dof is None for r in ratios):
        return unknown
    variances = [(r.log_se or 0.0) ** 2 / n**2 for r in ratios]
    total = sum(variances)
    if total == 0:
        return dataclasses.replace(unknown, low=value, high=value, log_se=0.0, dof=math.inf)
    dof = total**2 / sum(v**2 / (r.dof or 1.0) for v, r in zip(variances, ratios, strict=True))
    half = float(stdtrit(dof, 1 - ALPHA / 2)) * math.sqrt(total)
    return dataclasses.replace(
        unknown,
        low=math.exp(log_mean - half),
        high=math.exp(log_mean + half),
        log_se=math.sqrt(total),
        dof=dof,
    )
