"""The verdicts of a comparison: each version against the baseline at each client level and over
the whole curve (stats.verdicts), from the stored steady-state means of the repeats of every
run each version pools (selectors.runs_pooled), with the host's run-to-run variation; and what
"settle it" would queue for the levels left inconclusive.

Two queries whatever the number of runs, both compare.selectors': the pooled repeats
(comparison_repeats), and the host's history under the baseline's comparability key at the
compared levels (comparison_history_spreads: other builds' repeats, the noise the verdicts pool
in, and, with the compared builds, what the page says the host can see).
docs/statistics.md explains the method.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from benchhub.compare.selectors.comparisons import Comparison
from benchhub.compare.selectors.repeats import comparison_history_spreads, comparison_repeats
from benchhub.compare.settling import SETTLE_JOBS, measurement_seconds, settle_text
from benchhub.compare.types import Series
from benchhub.compare.verdict_text import curve_summary, host_noise_text, level_description
from benchhub.stats import verdicts
from benchhub.stats.noise import (
    HostNoise,
    detectable_difference,
    log_spread,
    pooled_noise,
    repeats_needed,
)
from benchhub.stats.repeats import Repeat
from benchhub.stats.verdicts import CurveVerdict, LevelVerdict, Verdict

DEFAULT_THRESHOLD = verdicts.DEFAULT_THRESHOLD
# "Settle it" asks for at most this many more repeats a side in one job.
MAX_SETTLE_REPEATS = 10
# With one repeat a side the variation is unknown: this many more make an interval possible.
UNKNOWN_SETTLE_REPEATS = 2


@dataclass
class LevelRow:
    """One version against the baseline at one client level: the level's own verdict, the
    verdict after Holm over the curve, what the host's noise lets these repeats see, how the
    verdict was reached in words (verdict_text.level_description) and, for a level left
    inconclusive, the change that would settle it with its time (settling.settle_text)."""

    clients: int
    verdict: LevelVerdict
    corrected: Verdict
    noise: HostNoise | None
    visible: float | None
    description: str = ""
    settle_text: str = ""
    # A repeat of either side moved inside its run, unexplained: no verdict is called here.
    unsteady: bool = False

    @property
    def settle(self) -> bool:
        # More repeats do not explain a run whose throughput moved; a person does (the mark).
        return self.corrected is Verdict.INCONCLUSIVE and not self.unsteady


@dataclass
class VersionAssessment:
    """One version (not the baseline) against the baseline; `summary` is the sentence on its
    curve (verdict_text.curve_summary), "" without one."""

    series: Series
    curve: CurveVerdict | None
    levels: dict[int, LevelRow] = field(default_factory=dict)
    summary: str = ""

    @property
    def label(self) -> str:
        return self.series.label


@dataclass
class Assessment:
    threshold: float
    aa: bool
    versions: list[VersionAssessment]
    noise_text: str
    repeats: dict[int, dict[int, int]]  # series run id -> clients -> repeats pooled
    # The pooled repeats themselves (series run id -> clients -> repeats): the knee of each
    # curve (compare.knees) is read from them, without a query of its own.
    pooled: dict[int, dict[int, list[Repeat]]] = field(default_factory=dict)

    def row(self, series: Series, clients: int) -> LevelRow | None:
        for version in self.versions:
            if version.series is series:
                return version.levels.get(clients)
        return None

    @property
    def inconclusive(self) -> bool:
        return any(row.settle for v in self.versions for row in v.levels.values())


@dataclass(frozen=True)
class SettlePlan:
    """What "settle it" queues: these versions' runs (baseline first) at these levels, with
    `repeats` more repeats a side, in each of `jobs` separate jobs."""

    runs: list
    clients: list[int]
    repeats: int
    aa: bool
    jobs: int = 1


def comparison_assess(
    comparison: Comparison, *, threshold: float = DEFAULT_THRESHOLD
) -> Assessment:
    """Every version against the baseline at every level both have repeats of."""
    if not comparison.series:
        return Assessment(threshold, False, [], "", {})
    repeats = comparison_repeats(comparison)
    base = comparison.series[0]
    history, host = _noise(comparison, repeats)
    pace = measurement_seconds([s.run for s in comparison.series])
    assessed = []
    for series in comparison.series[1:]:
        version = _version(series, base, repeats, history=history, host=host, threshold=threshold)
        for row in version.levels.values():
            if row.settle:
                row.settle_text = settle_text(row.verdict, pace=pace)
        assessed.append(version)
    counts = {
        s.run.id: {c: len(r) for c, r in repeats[s.run.id].items()} for s in comparison.series
    }
    return Assessment(
        threshold=threshold,
        aa=comparison.is_aa,
        versions=assessed,
        noise_text=host_noise_text(host=host, base_repeats=counts[base.run.id]),
        repeats=counts,
        pooled=repeats,
    )


def _version(
    series: Series,
    base: Series,
    repeats: dict[int, dict[int, list[Repeat]]],
    *,
    history: dict[int, HostNoise | None],
    host: dict[int, HostNoise | None],
    threshold: float,
) -> VersionAssessment:
    mine, theirs = repeats[series.run.id], repeats[base.run.id]
    levels = verdicts.level_verdicts(
        sides={c: (theirs[c], mine[c]) for c in sorted(set(mine) & set(theirs))},
        threshold=threshold,
        tps_noise=history,
    )
    if not levels:
        return VersionAssessment(series=series, curve=None)
    unsteady = (series.unsteady | base.unsteady) & set(levels)
    levels = {c: unsteady_uncalled(v) if c in unsteady else v for c, v in levels.items()}
    curve = _curve(levels, unsteady)
    rows = {}
    for clients, level in levels.items():
        noise = host.get(clients)
        visible = None
        if noise is not None:
            visible = detectable_difference(noise=noise, repeats=min(level.repeats))
        description = level_description(level)
        if clients in unsteady:
            description = f"{description} {UNSTEADY_NOTE}."
        rows[clients] = LevelRow(
            clients,
            level,
            curve.levels[clients],
            noise,
            visible,
            description,
            unsteady=clients in unsteady,
        )
    summary = curve_summary(curve, baseline_label=base.label, other_label=series.label)
    return VersionAssessment(series=series, curve=curve, levels=rows, summary=summary)


UNSTEADY_NOTE = (
    "Throughput drifted inside a run at this level (a trend or a level shift): no verdict is "
    "called until a reviewer marks the run explained"
)


def unsteady_uncalled(level: LevelVerdict) -> LevelVerdict:
    """The level's figures with its verdict left inconclusive and its tests dropped, so that
    neither the level nor Holm's family over the curve calls it."""
    return replace(
        level, verdict=Verdict.INCONCLUSIVE, p_difference=None, p_same=None, repeats_needed=None
    )


def _curve(levels: dict[int, LevelVerdict], unsteady: set[int]) -> CurveVerdict:
    """The curve's verdict over its steady levels (the geometric mean too), the unsteady ones
    added as inconclusive; over every level, none called, when none is steady."""
    steady = {c: v for c, v in levels.items() if c not in unsteady}
    curve = verdicts.curve_verdict(levels=steady or levels)
    if not unsteady or not steady:
        return curve
    corrected = {**curve.levels, **dict.fromkeys(unsteady, Verdict.INCONCLUSIVE)}
    counts = {v: sum(1 for c in corrected.values() if c is v) for v in Verdict}
    return replace(curve, levels=dict(sorted(corrected.items())), counts=counts)


def _noise(
    comparison: Comparison, repeats: dict[int, dict[int, list[Repeat]]]
) -> tuple[dict[int, HostNoise | None], dict[int, HostNoise | None]]:
    """Per level: the host's history (other builds under the baseline's comparability key,
    grouped by build), which the verdicts pool in; and the host's noise with the compared
    versions' own repeats added, which the page shows."""
    levels = sorted({c for r in repeats.values() for c in r})
    history_spreads = comparison_history_spreads(comparison, levels=levels)
    history = {c: pooled_noise(history_spreads[c]) for c in levels}
    own = {
        c: [
            log_spread([r.tps.value for r in series_levels[c]])
            for series_levels in repeats.values()
            if c in series_levels
        ]
        for c in levels
    }
    host = {c: pooled_noise([*history_spreads[c], *own[c]]) for c in levels}
    return history, host


def settle_plan(comparison: Comparison, assessment: Assessment) -> SettlePlan | None:
    """More measurements of the levels left inconclusive (after Holm), for the baseline and each
    version with such a level. Where such a level's interval has one run a side (its units the
    repeats inside one job), more repeats in one more job cannot show the variation between
    runs: SETTLE_JOBS separate jobs, each with as many repeats as the runs have. Otherwise one
    job with as many more repeats a side as the observed variation says would likely settle
    the least settled level (at most MAX_SETTLE_REPEATS). None when no level is left open."""
    if not comparison.series:
        return None
    open_rows: list[LevelRow] = []
    runs = [comparison.series[0].run]
    for version in assessment.versions:
        found = [row for row in version.levels.values() if row.settle]
        if found and version.series.run.build_id != runs[0].build_id:
            runs.append(version.series.run)
        open_rows.extend(found)
    if not open_rows:
        return None
    clients = sorted({row.clients for row in open_rows})
    open_levels = [row.verdict for row in open_rows]
    one_run = [level for level in open_levels if level.tps.one_job]
    if one_run:
        repeats = max(min(level.repeats) for level in one_run)
        return SettlePlan(
            runs=runs,
            clients=clients,
            repeats=min(MAX_SETTLE_REPEATS, repeats),
            aa=assessment.aa,
            jobs=SETTLE_JOBS,
        )
    extra = max(_more_repeats(level) for level in open_levels)
    return SettlePlan(runs=runs, clients=clients, repeats=extra, aa=assessment.aa)


def _more_repeats(level: LevelVerdict) -> int:
    have = min(level.repeats)
    if level.tps.cv is None:
        return UNKNOWN_SETTLE_REPEATS
    needed = level.repeats_needed
    if needed is None:
        # Inconclusive only after Holm: how many would settle it on its own, as a floor.
        needed = repeats_needed(
            log_ratio=level.tps.log_value,
            cv=level.tps.cv,
            threshold=level.threshold,
            paired=level.tps.paired,
        )
    if needed is None:
        return MAX_SETTLE_REPEATS
    return max(1, min(MAX_SETTLE_REPEATS, needed - have))
