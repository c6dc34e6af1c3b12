"""The comparability key: everything that must be equal for two results to be compared.

Held constant: the host's hardware fingerprint, the configuration hash, the workload definition,
the scale, and the duration (or transaction count) of each pgbench execution, with the levels
whose duration differs (`level_durations`, hashed only when set so older keys stay). The version
is the compared axis, so it is left out; so is the client level, which is the x axis. Everything
else that may differ (pgbench client version, kernel, threads, the warm-up, the tablespaces and
their devices, host tuning) is shown as a difference by the pages, leaves a run out of a
version's set in a comparison and splits a History line and a detected series
(compare.describe.held_differences, compare.splits).
"""

from benchhub.digests import canonical_digest


def comparability_key(
    *,
    host_fingerprint: str,
    config_hash: str,
    workload_hash: str,
    scale: int | None,
    duration_s: float | None,
    transactions_per_client: int | None,
    level_durations: dict[str, float] | None = None,
) -> str:
    held: dict[str, object] = {
        "host": host_fingerprint,
        "config": config_hash,
        "workload": workload_hash,
        "scale": scale,
        "duration_s": duration_s,
        "transactions_per_client": transactions_per_client,
    }
    if level_durations:
        held["level_durations"] = {str(k): float(v) for k, v in level_durations.items()}
    return canonical_digest(held)
