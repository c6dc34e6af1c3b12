"""The reads behind the experiment pages: what has been run of each published experiment
(compare.experiments), and the runs of one experiment on one host for the chosen versions.

`experiment_get` returns one Comparison per workload of the experiment, built with a fixed
number of queries whatever the number of workloads or versions: runs, aggregates, threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchhub.compare.describe import Difference, differences
from benchhub.compare.experiments import BY_ID, EXPERIMENTS, Experiment
from benchhub.compare.selectors.comparisons import (
    MAX_COMPARED,
    Comparison,
    ComparisonError,
    comparison_build,
    run_levels,
    run_threads,
    runs_compared,
)
from benchhub.compare.selectors.versions import versions_pick, versions_q
from benchhub.compare.types import Series
from benchhub.hosts.models import Host, host_name_key
from benchhub.results.models import Run

MAX_EXPERIMENT_RUNS = 300
MAX_INDEX_ROWS = 2000


@dataclass
class Ran:
    """What has been run of one experiment on one host: its versions (in version order) and
    the workloads by name."""

    host: str
    versions: list[str]
    workloads: list[str]


def experiment_index() -> dict[str, list[Ran]]:
    """Experiment id -> the hosts with valid aggregated runs of its workloads. One query."""
    entries = {entry: e.id for e in EXPERIMENTS for entry in e.catalog_entries}
    rows = (
        Run.objects.filter(invalid=False, workload__catalog_entry__in=entries)
        .values_list("workload__catalog_entry", "host__name", "build__version", "workload__name")
        .order_by("host__name", "build__sort_key", "build__version", "workload__name")
        .distinct()[:MAX_INDEX_ROWS]
    )
    found: dict[str, dict[str, Ran]] = {e.id: {} for e in EXPERIMENTS}
    for entry, host, version, workload in rows:
        ran = found[entries[entry]].setdefault(host, Ran(host=host, versions=[], workloads=[]))
        if version not in ran.versions:
            ran.versions.append(version)
        if workload not in ran.workloads:
            ran.workloads.append(workload)
    return {key: list(hosts.values()) for key, hosts in found.items()}


def experiment_newest_host(*, experiment: str) -> str | None:
    """The host with the newest valid aggregated run of the experiment's workloads (the page's
    default choice), or None when nothing has run. One query."""
    chosen = BY_ID.get(experiment)
    if chosen is None:
        return None
    return (
        Run.objects.filter(
            invalid=False,
            workload__catalog_entry__in=chosen.catalog_entries,
        )
        .order_by("-started_at", "-id")
        .values_list("host__name", flat=True)
        .first()
    )


@dataclass
class ExperimentResults:
    """One experiment on one host: a Comparison per workload (catalog order, then name), each
    with the versions asked for in order (the first is the baseline)."""

    experiment: Experiment
    host: Host
    versions: list[str]
    comparisons: list[Comparison]
    missing: list[str]
    differences: list[Difference] = field(default_factory=list)

    @property
    def series(self) -> list[Series]:
        return [s for c in self.comparisons for s in c.series]


def experiment_get(
    *, experiment: str, host: str, versions: list[str], include_invalid: bool = False
) -> ExperimentResults:
    """The newest aggregated run of each (workload of the experiment, version) on `host`,
    leaving out runs marked invalid unless asked; four queries (host, runs, aggregates,
    threads). `differences` compares every run shown, labelled "workload · version", in all
    aspects but the workload itself, which is meant to vary across an experiment.

    Raises ComparisonError naming the parameter at fault.
    """
    chosen_experiment = BY_ID.get(experiment)
    if chosen_experiment is None:
        raise ComparisonError("invalid", f"No experiment {experiment!r}.", field="experiment")
    if not versions:
        raise ComparisonError("invalid", "versions is required.", field="versions")
    chosen = Host.objects.filter(name_key=host_name_key(host)).first()
    if chosen is None:
        raise ComparisonError("invalid", f"No host named {host!r}.", field="host")
    versions = versions[:MAX_COMPARED]
    runs = list(
        runs_compared(include_invalid)
        .filter(
            versions_q(versions),
            host=chosen,
            workload__catalog_entry__in=chosen_experiment.catalog_entries,
        )
        # DISTINCT ON keeps the newest run of each (workload, version), as ORDER BY puts it first.
        .order_by("workload_id", "build__version", "-started_at", "-id")
        .distinct("workload_id", "build__version")[:MAX_EXPERIMENT_RUNS]
    )
    groups = _by_workload(runs, versions, chosen_experiment.catalog_entries)
    shown = [run for group in groups for run in group.values()]
    levels, threads = run_levels(shown), run_threads(shown)
    comparisons = [
        comparison_build(
            list(group.values()),
            missing=[v for v in versions if v not in group],
            levels=levels,
            threads=threads,
        )
        for group in groups
    ]
    found = {v for group in groups for v in group}
    return ExperimentResults(
        experiment=chosen_experiment,
        host=chosen,
        versions=[v for v in versions if v in found],
        comparisons=comparisons,
        missing=[v for v in versions if v not in found],
        differences=_across(comparisons),
    )


def _by_workload(
    runs: list[Run], versions: list[str], entries: tuple[str, ...]
) -> list[dict[str, Run]]:
    """Per workload (in catalog order), the run standing for each version asked, in order."""
    groups: dict[int, list[Run]] = {}
    for run in runs:
        groups.setdefault(run.workload_id, []).append(run)
    ordered = sorted(
        groups.values(),
        key=lambda g: (entries.index(g[0].workload.catalog_entry), g[0].workload.name),
    )
    return [versions_pick(versions, group) for group in ordered]


def _across(comparisons: list[Comparison]) -> list[Difference]:
    everything = [
        Series(
            label=f"{c.series[0].run.workload.name} · {s.label}"
            if len(comparisons) > 1
            else s.label,
            run=s.run,
            levels=s.levels,
            threads=s.threads,
        )
        for c in comparisons
        for s in c.series
    ]
    # The workload is what varies across an experiment; the threads stay in, as a different
    # threads policy between versions changes what is measured.
    return [d for d in differences(everything) if d.name != "workload"]
