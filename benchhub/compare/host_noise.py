"""A host's run-to-run variation per workload and client level, from the stored steady-state
means of the repeats it ran (noise.host_noise): each group is one build's repeats under one
comparability key, so separate runs of the same build count as the separate runs a comparison
meets. One query over the host's newest results, bounded."""

from __future__ import annotations

from dataclasses import dataclass

from benchhub.compare.verdict_text import noise_sentence
from benchhub.hosts.models import Host
from benchhub.results.models import Result
from benchhub.stats.noise import HostNoise, detectable_difference, host_noise

MAX_RESULTS = 20000
SHOWN_REPEATS = 3


@dataclass(frozen=True)
class NoiseRow:
    workload: str
    clients: int
    noise: HostNoise
    visible: float  # smallest difference visible 4 times in 5 with SHOWN_REPEATS a side
    sentence: str


def host_noise_rows(*, host: Host, repeats: int = SHOWN_REPEATS) -> list[NoiseRow]:
    """The host's noise at each workload and level it has repeats of (by workload name, then
    clients); levels without two repeats of one build are left out."""
    rows = (
        Result.objects.filter(run__host=host, aborted=False, steady_tps__gt=0, run__invalid=False)
        .order_by("-id")
        .values_list(
            "run__workload__name", "clients", "comparability_key", "run__build_id", "steady_tps"
        )[:MAX_RESULTS]
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
        found.append(
            NoiseRow(
                workload=workload,
                clients=clients,
                noise=noise,
                visible=detectable_difference(noise=noise, repeats=repeats),
                sentence=noise_sentence(noise=noise, repeats=repeats),
            )
        )
    return found
