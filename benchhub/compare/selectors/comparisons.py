"""The runs a comparison compares, with their sets and aggregates (comparison_get), its parts
that the experiments reuse, and what the selection form offers (compare_choices).

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

from django.db.models import Exists, Max, Min, OuterRef, Q

from benchhub.builds.versions import PATCH_MARK, VersionError, version_parse
from benchhub.compare.describe import (
    Difference,
    differences,
    held_differences,
    series_labels,
    threads_difference,
)
from benchhub.errors import ApplicationError
from benchhub.hosts.models import Host
from benchhub.results.models import LevelAggregate, Result, Run
from benchhub.results.selectors import RUN_RELATIONS, level_aggregate_of
from benchhub.workloads.models import Workload

RUN_DEFERRED = (
    "settings",
    "setting_sources",
    "init_output",
    "config_overrides",
    "settings_translated",
    "settings_not_applied",
)
MAX_COMPARED = 12
MAX_POOLED_RUNS = 50


class ComparisonError(ApplicationError):
    """A selection that cannot be compared; `field` names the query parameter at fault."""


@dataclass
class Series:
    """One compared version (or run): its run, its aggregates by client count, its threads."""

    label: str
    run: Run
    levels: dict[int, LevelAggregate]
    threads: list[int]
    # The set of runs everything shown for the version is made of: `run` first, then the other
    # runs of its build under its comparability key (on its host, unless same_hardware), newest
    # first.
    pooled: list[Run] = field(default_factory=list)
    # Client levels at which a repeat of the set was flagged client-bound (pgbench itself the
    # bottleneck): there a verdict measures the client, not the server.
    client_bound: set[int] = field(default_factory=set)

    @property
    def is_summary(self) -> bool:
        return self.run.source == Run.Source.SUMMARY


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


def runs_compared(include_invalid: bool):
    runs = Run.objects.select_related(*RUN_RELATIONS).defer(*RUN_DEFERRED)
    return runs if include_invalid else runs.filter(invalid=False)


MAX_CANDIDATES = 500


def _runs_for_versions(
    *, workload: str, host: str, versions: list[str], same_hardware: bool, include_invalid: bool
) -> tuple[list[Run], list[str]]:
    """The run standing for each version, and the versions whose run had to come from another
    comparability key than the others'.

    Runs are chosen by comparability key, not by workload name alone: two sizes of one catalog
    entry share a name but not a key. The key chosen is the one whose runs cover the most of
    the versions asked (the newest on a tie); each version takes its newest run under that key,
    and only a version with none under it falls back to its newest run of any key.
    """
    chosen = Host.objects.select_related("current_facts").filter(name=host).first()
    if chosen is None:
        raise ComparisonError("invalid", f"No host named {host!r}.", field="host")
    runs = runs_compared(include_invalid).filter(versions_q(versions), workload__name=workload)
    if same_hardware and chosen.current_facts is not None:
        runs = runs.filter(host_facts__fingerprint=chosen.current_facts.fingerprint)
    else:
        runs = runs.filter(host=chosen)
    # DISTINCT ON keeps the newest run of each (build version, key), as ORDER BY puts it first.
    candidates = list(
        runs.order_by("build__version", "comparability_key", "-started_at", "-id").distinct(
            "build__version", "comparability_key"
        )[:MAX_CANDIDATES]
    )
    candidates.sort(key=lambda run: (run.started_at, run.id), reverse=True)
    by_key: dict[str, list[Run]] = {}
    for run in candidates:
        by_key.setdefault(run.comparability_key, []).append(run)
    picks = {key: versions_pick(versions, group) for key, group in by_key.items()}
    # Candidates are newest first, so on equal coverage the key seen first is the newest.
    best = max(picks, key=lambda key: len(picks[key]), default=None)
    picked = picks[best] if best is not None else {}
    newest = versions_pick(versions, candidates)
    mixed = [v for v in versions if v not in picked and v in newest]
    by_version = {**newest, **picked}
    return [by_version[v] for v in versions if v in by_version], mixed


def versions_q(versions: list[str]) -> Q:
    """Runs of these versions: each exactly, and a bare major ("13", "9.6") as its whole series
    of unpatched builds (releases, pre-releases, snapshots)."""
    matches = Q()
    for version in versions:
        matches |= Q(build__version=version)
        series = _series(version)
        if series is not None:
            matches |= Q(build__major=series) & ~Q(build__version__contains=PATCH_MARK)
    return matches


def versions_pick(versions: list[str], runs: list[Run]) -> dict[str, Run]:
    """For each version asked for, the run that stands for it among `runs` (if any)."""
    picked = {}
    for version in versions:
        run = _newest_of(version, runs)
        if run is not None:
            picked[version] = run
    return picked


def _series(version: str) -> str | None:
    """The major a bare major names ("13", "9.6"), else None (a version, or not one at all)."""
    try:
        parsed = version_parse(version)
    except VersionError:
        return None
    return parsed.major if parsed.series else None


def _newest_of(version: str, runs: list[Run]) -> Run | None:
    """The run of exactly `version`, else (for a bare major such as "13") the newest run of
    any unpatched build in that series, so "13 against 14" finds 13.23 and 14.23."""
    exact = [run for run in runs if run.build.version == version]
    major = _series(version)
    if exact or major is None:
        return exact[0] if exact else None
    series = [
        run for run in runs if run.build.major == major and PATCH_MARK not in run.build.version
    ]
    return max(series, key=lambda run: (run.started_at, run.id), default=None)


def _runs_by_uuid(*, uuids: list[uuid.UUID], include_invalid: bool) -> list[Run]:
    by_uuid = {run.uuid: run for run in runs_compared(include_invalid).filter(uuid__in=uuids)}
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
) -> Comparison:
    """The runs to compare, in the order asked (the first is the baseline, unless `baseline`
    names another version or another version's run is marked baseline), with their aggregates,
    the runs each pools, and the differences. Either `runs` (specific runs, pooled with nothing)
    or workload + host + versions. `include_unlike` keeps in each set the runs that differ from
    the one standing for the version in what a set holds equal: they are then listed under
    `unlike` (the verdicts are not like with like) instead of `left_out`.

    Raises ComparisonError naming the parameter when the selection cannot be made.
    """
    if runs:
        chosen = _runs_by_uuid(uuids=runs[:MAX_COMPARED], include_invalid=include_invalid)
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


def runs_pooled(
    runs: list[Run],
    *,
    include_invalid: bool = False,
    same_hardware: bool = False,
    left_out: dict[int, list[tuple[Run, list[str]]]] | None = None,
    include_unlike: bool = False,
) -> dict[int, list[Run]]:
    """For each run, the set of runs everything its version shows is made of: itself, then
    every other run of its build under its comparability key on its own host (`same_hardware`:
    on any host whose hardware shares the key), newest first, at most MAX_POOLED_RUNS. Hosts
    with the same hardware facts share a key, so without the host a twin host's runs would
    join unasked. A run that differs from the one standing for the version in what can move tps
    besides the key (describe.HELD_IN_A_SET: pgbench client major, kernel, warm-up, tablespaces,
    huge pages, CPU governor) stays out, recorded with its differences in `left_out` (run id ->
    [(run, differences)]); with `include_unlike` it joins the set all the same, and is recorded
    there too. One query."""
    pooled: dict[int, list[Run]] = {run.id: [run] for run in runs}
    if not runs:
        return pooled
    same = Q()
    for run in runs:
        mine = Q(build_id=run.build_id, comparability_key=run.comparability_key)
        same |= mine if same_hardware else mine & Q(host_id=run.host_id)
    others = Run.objects.filter(same).exclude(pk__in=[run.id for run in runs])
    if not include_invalid:
        others = others.filter(invalid=False)
    rows = others.select_related("host", "host_facts").only(
        *POOLED_COLUMNS,
        "host__name",
        "host_facts__kernel",
        "host_facts__extra",
        "host_facts__sysctl",
    )
    for other in rows.order_by("-started_at", "-id")[: MAX_POOLED_RUNS * len(runs)]:
        for run in runs:
            mine_runs = pooled[run.id]
            if not _same_set(run, other, same_hardware) or len(mine_runs) >= MAX_POOLED_RUNS:
                continue
            differs = held_differences(run, other)
            if not differs or include_unlike:
                mine_runs.append(other)
            if differs and left_out is not None:
                left_out.setdefault(run.id, []).append((other, differs))
    return pooled


POOLED_COLUMNS = (
    "id",
    "uuid",
    "build_id",
    "comparability_key",
    "started_at",
    "job_id",
    "host_id",
    "pgbench_version",
    "warmup_s",
    "tablespaces",
)


def _same_set(run: Run, other: Run, same_hardware: bool) -> bool:
    if (other.build_id, other.comparability_key) != (run.build_id, run.comparability_key):
        return False
    return same_hardware or other.host_id == run.host_id


def pooled_levels(
    runs: list[Run],
    pooled: dict[int, list[Run]],
    *,
    left_out: dict[int, list[tuple[Run, list[str]]]] | None = None,
    client_bound: dict[int, set[int]] | None = None,
    include_unlike: bool = False,
) -> dict[int, dict[int, LevelAggregate]]:
    """For each run, its per-level aggregates over the repeats of its whole set (runs_pooled;
    results.selectors.level_aggregate_of), so the table, the charts and the change % read the
    runs the verdicts read. A member whose pgbench threads at a level differ from the run's at
    that level first leaves the set (`pooled` is changed in place, the member recorded in
    `left_out` as runs_pooled does). `client_bound` gets, for each run, the levels at which a
    valid repeat of its set was flagged client-bound. One query, whatever the sets hold."""
    if not runs:
        return {}
    members = {member.id for run in runs for member in pooled.get(run.id) or [run]}
    rows = Result.objects.filter(run__in=members).only(
        "run_id", "clients", "threads", "tps", "latency_avg_ms", "aborted", "client_bound"
    )
    by_run: dict[int, list[Result]] = {}
    for row in rows:
        by_run.setdefault(row.run_id, []).append(row)
    sets = {
        run.id: _same_threads(
            run, pooled.get(run.id) or [run], by_run, left_out, include_unlike=include_unlike
        )
        for run in runs
    }
    if pooled:
        pooled.update(sets)
    levels: dict[int, dict[int, LevelAggregate]] = {}
    for run in runs:
        by_level: dict[int, list[Result]] = {}
        for member in sets[run.id]:
            for row in by_run.get(member.id, []):
                by_level.setdefault(row.clients, []).append(row)
        levels[run.id] = {
            clients: level_aggregate_of(run=run, clients=clients, results=rows)
            for clients, rows in sorted(by_level.items())
        }
        if client_bound is not None:
            client_bound[run.id] = {
                clients
                for clients, rows in by_level.items()
                if any(r.client_bound for r in rows if not r.aborted)
            }
    return levels


def _same_threads(
    run: Run,
    members: list[Run],
    by_run: dict[int, list[Result]],
    left_out: dict[int, list[tuple[Run, list[str]]]] | None,
    *,
    include_unlike: bool = False,
) -> list[Run]:
    """`members` without those whose pgbench threads at a level differ from `run`'s there
    (recorded in `left_out`; kept all the same with `include_unlike`)."""
    mine = {r.clients: r.threads for r in by_run.get(run.id, []) if r.threads is not None}
    kept = []
    for member in members:
        lines = (
            threads_difference(r.clients, mine.get(r.clients), r.threads)
            for r in by_run.get(member.id, [])
        )
        differs = sorted({line for line in lines if line})
        if not differs or member.id == run.id or include_unlike:
            kept.append(member)
        if differs and member.id != run.id and left_out is not None:
            left_out.setdefault(run.id, []).append((member, differs))
    return kept


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
) -> Comparison:
    # A version's set (runs named by UUID: each run alone) is narrowed to the runs of the same
    # threads and aggregated before anything reads it.
    pooled = pooled if pooled is not None else {run.id: [run] for run in runs}
    bound: dict[int, set[int]] = {}
    pooled_at = pooled_levels(
        runs, pooled, left_out=left_out, client_bound=bound, include_unlike=include_unlike
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
    return comparison


@dataclass
class Choices:
    workloads: list[str]
    hosts: list[str]
    versions: list[str]


MAX_CHOICES = 500


def compare_choices(*, workload: str | None, host: str | None) -> Choices:
    """What the selection form offers: workload names and hosts that have runs, and the
    versions with runs of that workload on that host (in version order). Three queries."""
    # From the small tables, each row checked for one run through its (x, -started_at) index:
    # a DISTINCT over the runs read every run, and grew with the history (bench/, compare).
    workloads = list(
        Workload.objects.filter(Exists(Run.objects.filter(workload=OuterRef("pk"))))
        .order_by("name")
        .values_list("name", flat=True)
        .distinct()[:MAX_CHOICES]
    )
    hosts = list(
        Host.objects.filter(Exists(Run.objects.filter(host=OuterRef("pk"))))
        .order_by("name")
        .values_list("name", flat=True)[:MAX_CHOICES]
    )
    runs = Run.objects.all()
    if workload:
        runs = runs.filter(workload__name=workload)
    if host:
        runs = runs.filter(host__name=host)
    versions = [
        version
        for version, _ in runs.order_by("build__sort_key", "build__version")
        .values_list("build__version", "build__sort_key")
        .distinct()[:MAX_CHOICES]
    ]
    return Choices(workloads=workloads, hosts=hosts, versions=versions)
