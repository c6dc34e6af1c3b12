"""The order of one version's measurements: its client levels and repeats as the job lists
them, or shuffled per repeat from the job's seed."""

from __future__ import annotations

import random

from ..jobspec.spec import JobSpec


def level_sequence(job: JobSpec) -> list[tuple[int, int]]:
    """(clients, repeat) of one version in the order they are measured.

    `given`: the levels as the job lists them, each level's repeats together. `shuffled`: repeat
    by repeat, each a new shuffle of the levels drawn from `shuffle_seed`, so a drift of the host
    over the sweep does not line up with the client count, and the same seed gives the same
    order again.
    """
    repeats = range(1, job.repeats + 1)
    if job.level_order != "shuffled":
        return [(c, r) for c in job.clients for r in repeats]
    # A seeded, reproducible order is the point here, not unpredictability.
    rng = random.Random(job.shuffle_seed)  # noqa: S311
    sequence = []
    for repeat in repeats:
        levels = list(job.clients)
        rng.shuffle(levels)
        sequence += [(c, repeat) for c in levels]
    return sequence
