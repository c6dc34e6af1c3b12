"""A host's run-to-run variation per workload and client level, for the host page."""

from __future__ import annotations

from dataclasses import dataclass

from benchhub.hosts.models import Host
from benchhub.results.models import Result
from benchhub.stats.noise import HostNoise, detectable_difference, host_noise

HOST_NOISE_RESULTS = 20000
HOST_NOISE_REPEATS = 3


@dataclass(frozen=True)
class NoiseRow:
    """A host's run-to-run variation at one workload and level; `visible` the smallest
    difference visible 4 times in 5 with `repeats` a side (host_noise_rows)."""

    workload: str
    clients: int
    noise: HostNoise
    visible: float
    repeats: int


def host_noise_rows(*, host: Host, repeats: int = HOST_NOISE_REPEATS) -> list[NoiseRow]:
    """The host's noise at each workload and level it has repeats of (by workload name, then
    clients), from the stored steady-state means of its repeats (stats.noise.host_noise): each
    group is one build's repeats under one comparability key, so separate runs of the same
    build count as the separate runs a comparison meets. Levels without two repeats of one
    build are left out. One query over the host's newest results, at most HOST_NOISE_RESULTS."""
    rows = (
        Result.objects.filter(run__host=host, aborted=False, steady_tps__gt=0, run__invalid=False)
        .order_by("-id")
        .values_list(
            "run__workload__name", "clients", "comparability_key", "run__build_id", "steady_tps"
        )[:HOST_NOISE_RESULTS]
    )
    groups: dict[tuple[str, int], dict[tuple[str, int], list[float]]] = {}
    for workload, clients, key, build_id, tps in rows:
        groups.setdefault((workload, clients), {}).setdefault((key, build_id), []).append(
            float(tps or 0)
        )
    found = []
    for (workload, clients), by_build in sorted(groups.items()):
        noise = host_noise(groups=by_build.values())
        if noise is None:
            continue
        visible = detectable_difference(noise=noise, repeats=repeats)
        found.append(NoiseRow(workload, clients, noise, visible, repeats))
    return found
