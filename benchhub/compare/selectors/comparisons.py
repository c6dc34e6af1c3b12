"""The runs a comparison compares, with their sets and aggregates (comparison_get), and its
parts that the experiments reuse (comparison_build, run_levels, run_threads). Which run stands
for a version is versions.py's; each version's set of runs, sets.py's.

`comparison_get` picks the runs to compare and returns them with their per-level aggregates and
the list of everything other than the version in which they differ. Which run stands for a
version: the newest (by `started_at`) aggregated run of that version matching the workload and
host (or hardware fingerprint) under the comparability key most versions share, leaving out runs
marked invalid unless asked for; a version with no run under that key takes its newest, and the
comparison says it mixes keys. Older runs of the same version are history (see `history_get`),
not repeats: repeats live inside a run. Each version is one set of runs: that run and every run
of its build under its comparability key (the same host hardware, configuration, workload,
scale and length) on the same host, or on any host of that hardware when `same_hardware` asks,
so more repeats queued later ("settle it") join the comparison. The per-level numbers, the
change % and the verdicts are all made of that set; a comparison of runs named by UUID pools
nothing. The baseline is the first version, unless another version's
run is marked baseline (review) or the `baseline` parameter names one.

comparison_get runs a fixed number of SQL queries whatever the number of runs stored: one per
kind of row (host, runs, aggregates, threads), with relations joined, never one per run."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from django.db.models import Max, Min

from benchhub.compare.describe import Difference, differences, series_labels
from benchhub.compare.selectors.sets import pooled_levels, runs_pooled
from benchhub.compare.selectors.versions import version_runs, versions_pick
from benchhub.compare.types import Series
from benchhub.errors import ApplicationError
from benchhub.hosts.models import Host, host_name_key
from benchhub.results.hooks import runs_tagged
from benchhub.results.models import LevelAggregate, Result, Run
from benchhub.results.selectors import RUN_RELATIONS

RUN_DEFERRED = (
    "settings",
    "setting_sources",
    "init_output",
    "config_overrides",
    "settings_translated",
    "settings_not_applied",
)
MAX_COMPARED = 12


class ComparisonError(ApplicationError):
    """A selection that cannot be compared; `field` names the query parameter at fault."""


@dataclass(frozen=True)
class PartialNote:
    """A compared run whose sweep stopped early: where, why, and the levels it completed."""

    label: str
    stop_clients: int | None
    reason: str
    completed: list[int]


@dataclass(frozen=True)
class LeftOut:
    """Runs of a version's build under its key that its set leaves out, and why: they differ
    from the run that stands for the version in what can move tps (describe.HELD_IN_A_SET)."""

    label: str
    runs: int
    reasons: list[str]


@dataclass
class Comparison:
    series: list[Series]
    differences: list[Difference]
    missing: list[str]
    clients: list[int]
    partial: list[PartialNote] = field(default_factory=list)
    # Versions (or runs) compared although their comparability key differs from the others':
    # the chart mixes what is not held equal (the differences say what).
    mixed_keys: list[str] = field(default_factory=list)
    # The baseline is the version a reviewer marked baseline rather than the first one asked.
    baseline_marked: bool = False
    left_out: list[LeftOut] = field(default_factory=list)
    # Runs that differ as `left_out` would say, kept in their sets because the user asked
    # (include_unlike): every verdict made of them is not like with like.
    unlike: list[LeftOut] = field(default_factory=list)

    @property
    def baseline(self) -> Series | None:
        return self.series[0] if self.series else None

    @property
    def is_aa(self) -> bool:
        """An A/A comparison: every series is the same build (runs named by UUID)."""
        return len(self.series) > 1 and len({s.run.build_id for s in self.series}) == 1


def runs_compared(include_invalid: bool, tags: list[str] | None = None):
    """The runs a comparison may take: valid ones (unless `include_invalid`) carrying every
    one of `tags` (review's; none: any)."""
    runs = Run.objects.select_related(*RUN_RELATIONS).defer(*RUN_DEFERRED)
    runs = runs_tagged(runs, tags=tags or [])
    return runs if include_invalid else runs.filter(invalid=False)


def _runs_for_versions(
    *,
    workload: str,
    host: str,
    versions: list[str],
    same_hardware: bool,
    include_invalid: bool,
    tags: list[str],
) -> tuple[list[Run], list[str]]:
    """The run standing for each version among the workload's runs on the host (or its
    hardware), and the versions whose run had to come from another comparability key than the
    others' (versions.version_runs)."""
    chosen = (
        Host.objects.select_related("current_facts").filter(name_key=host_name_key(host)).first()
    )
    if chosen is None:
        raise ComparisonError("invalid", f"No host named {host!r}.", field="host")
    runs = runs_compared(include_invalid, tags).filter(workload__name=workload)
    if same_hardware and chosen.current_facts is not None:
        runs = runs.filter(host_facts__fingerprint=chosen.current_facts.fingerprint)
    else:
        runs = runs.filter(host=chosen)
    return version_runs(runs, versions)


def _runs_by_uuid(*, uuids: list[uuid.UUID], include_invalid: bool, tags: list[str]) -> list[Run]:
    runs = runs_compared(include_invalid, tags).filter(uuid__in=uuids)
    by_uuid = {run.uuid: run for run in runs}
    return [by_uuid[u] for u in uuids if u in by_uuid]


def comparison_get(
    *,
    workload: str | None = None,
    host: str | None = None,
    versions: list[str] | None = None,
    runs: list[uuid.UUID] | None = None,
    same_hardware: bool = False,
    include_invalid: bool = False,
    baseline: str | None = None,
    include_unlike: bool = False,
    tags: list[str] | None = None,
) -> Comparison:
    """The runs to compare, in the order asked (the first is the baseline, unless `baseline`
    names another version or another version's run is marked baseline), with their aggregates,
    the runs each pools, and the differences. Either `runs` (specific runs, pooled with nothing)
    or workload + host + versions. `include_unlike` keeps in each set the runs that differ from
    the one standing for the version in what a set holds equal: they are then listed under
    `unlike` (the verdicts are not like with like) instead of `left_out`. `tags` (review's):
    only runs carrying every one of them stand for a version or join its set; a run named by
    UUID without them is missing.

    Raises ComparisonError naming the parameter when the selection cannot be made.
    """
    if runs:
        chosen = _runs_by_uuid(
            uuids=runs[:MAX_COMPARED], include_invalid=include_invalid, tags=tags or []
        )
        wanted = [str(u) for u in runs]
        found = {str(run.uuid) for run in chosen}
        comparison = _comparison(chosen, missing=[w for w in wanted if w not in found])
        if comparison.series:
            base = comparison.series[0].run.comparability_key
            comparison.mixed_keys = [
                s.label for s in comparison.series if s.run.comparability_key != base
            ]
        return comparison
    if not (workload and host and versions):
        name = "workload" if not workload else "host" if not host else "versions"
        raise ComparisonError("invalid", f"{name} is required (or give runs).", field=name)
    if baseline is not None and baseline not in versions:
        raise ComparisonError(
            "invalid", "baseline must be one of the compared versions.", field="baseline"
        )
    chosen, mixed = _runs_for_versions(
        workload=workload,
        host=host,
        versions=versions[:MAX_COMPARED],
        same_hardware=same_hardware,
        include_invalid=include_invalid,
        tags=tags or [],
    )
    picked = versions_pick(versions, chosen)
    chosen, marked = _baseline_first(chosen, picked, baseline)
    left: dict[int, list[tuple[Run, list[str]]]] = {}
    comparison = _comparison(
        chosen,
        missing=[w for w in versions if w not in picked],
        pooled=runs_pooled(
            chosen,
            include_invalid=include_invalid,
            same_hardware=same_hardware,
            left_out=left,
            include_unlike=include_unlike,
            tags=tags or [],
        ),
        left_out=left,
        include_unlike=include_unlike,
    )
    if include_unlike:
        comparison.unlike = _left_out(comparison.series, left)
    else:
        comparison.left_out = _left_out(comparison.series, left)
    comparison.baseline_marked = marked
    comparison.mixed_keys = mixed
    return comparison


def _baseline_first(
    chosen: list[Run], picked: dict[str, Run], baseline: str | None
) -> tuple[list[Run], bool]:
    """`chosen` with the baseline first: the version named, else the first whose run is marked
    baseline (when the first is not), else as asked. The flag says a mark decided it."""
    first = picked.get(baseline) if baseline else None
    marked = False
    if first is None and chosen and not chosen[0].baseline:
        first = next((run for run in chosen if run.baseline), None)
        marked = first is not None
    if first is None:
        return chosen, False
    return [first, *(run for run in chosen if run.id != first.id)], marked


def _left_out(series: list[Series], left: dict[int, list[tuple[Run, list[str]]]]) -> list[LeftOut]:
    notes = []
    for s in series:
        mine = left.get(s.run.id, [])
        if mine:
            reasons: dict[str, int] = {}
            for _, lines in mine:
                for line in lines:
                    reasons[line] = reasons.get(line, 0) + 1
            texts = [f"{line}: {n} run{'s' if n != 1 else ''}" for line, n in reasons.items()]
            notes.append(LeftOut(label=s.label, runs=len(mine), reasons=texts))
    return notes


def run_levels(runs: list[Run]) -> dict[int, dict[int, LevelAggregate]]:
    """Each run's aggregates by client count, in one query: run id -> clients -> aggregate."""
    levels: dict[int, dict[int, LevelAggregate]] = {run.id: {} for run in runs}
    for aggregate in LevelAggregate.objects.filter(run__in=[r.id for r in runs]):
        levels[aggregate.run_id][aggregate.clients] = aggregate
    return levels


def run_threads(runs: list[Run]) -> dict[int, list[int]]:
    """Each run's fewest and most pgbench threads (one value when they agree), in one query."""
    threads: dict[int, list[int]] = {run.id: [] for run in runs}
    rows = (
        Result.objects.filter(run__in=[r.id for r in runs], threads__isnull=False)
        .values("run_id")
        .annotate(low=Min("threads"), high=Max("threads"))
        .order_by()
    )
    for row in rows:
        threads[row["run_id"]] = sorted({row["low"], row["high"]})
    return threads


def comparison_build(
    runs: list[Run],
    *,
    missing: list[str],
    levels: dict[int, dict[int, LevelAggregate]],
    threads: dict[int, list[int]],
    pooled: dict[int, list[Run]] | None = None,
    pooled_at: dict[int, dict[int, LevelAggregate]] | None = None,
) -> Comparison:
    """A Comparison of `runs` (baseline first) from aggregates and threads already read
    (run_levels, run_threads), so several comparisons can share their queries. With `pooled`
    (runs_pooled) and `pooled_at` (pooled_levels), a run that pools others shows the aggregates
    of its whole set."""
    pooled = pooled or {run.id: [run] for run in runs}
    pooled_at = pooled_at or {}
    series = [
        Series(
            label=label,
            run=run,
            levels=pooled_at.get(run.id) or _merged_levels(pooled[run.id], levels),
            threads=threads[run.id],
            pooled=pooled[run.id],
        )
        for label, run in zip(series_labels(runs), runs, strict=True)
    ]
    partial = [
        PartialNote(
            label=s.label,
            stop_clients=s.run.stop_clients,
            reason=s.run.stop_reason,
            completed=sorted(s.levels),
        )
        for s in series
        if s.run.status == Run.Status.PARTIAL
    ]
    clients = sorted({c for s in series for c in s.levels})
    if partial:
        # A partial run has no figure past where it stopped: every series is compared at the
        # levels the partial runs completed, never a full sweep against half of one.
        completed = set.intersection(*(set(note.completed) for note in partial))
        clients = [c for c in clients if c in completed]
        for s in series:
            s.levels = {c: a for c, a in s.levels.items() if c in completed}
    return Comparison(
        series=series,
        differences=differences(series),
        missing=missing,
        clients=clients,
        partial=partial,
    )


def _merged_levels(
    runs: list[Run], levels: dict[int, dict[int, LevelAggregate]]
) -> dict[int, LevelAggregate]:
    merged: dict[int, LevelAggregate] = {}
    for run in runs:
        for clients, aggregate in levels.get(run.id, {}).items():
            merged.setdefault(clients, aggregate)
    return merged


def _comparison(
    runs: list[Run],
    *,
    missing: list[str],
    pooled: dict[int, list[Run]] | None = None,
    left_out: dict[int, list[tuple[Run, list[str]]]] | None = None,
    include_unlike: bool = False,
    tags: list[str] | None = None,
) -> Comparison:
    # A version's set (runs named by UUID: each run alone) is narrowed to the runs of the same
    # threads and aggregated before anything reads it.
    pooled = pooled if pooled is not None else {run.id: [run] for run in runs}
    bound: dict[int, set[int]] = {}
    unsteady: dict[int, set[int]] = {}
    pooled_at = pooled_levels(
        runs,
        pooled,
        left_out=left_out,
        client_bound=bound,
        unsteady=unsteady,
        include_unlike=include_unlike,
    )
    comparison = comparison_build(
        runs,
        missing=missing,
        levels={},
        threads=run_threads(runs),
        pooled=pooled,
        pooled_at=pooled_at,
    )
    for series in comparison.series:
        series.client_bound = bound.get(series.run.id, set())
        series.unsteady = unsteady.get(series.run.id, set())
    return comparison
