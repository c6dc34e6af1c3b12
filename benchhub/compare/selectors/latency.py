"""Each compared version's latency percentiles per client level, from the sampled transaction
logs its agent sent as evidence (results.evidence), over the repeats of its whole set of runs:
what the Compare page's percentile chart and the compare API's per-level rows show."""

from __future__ import annotations

from benchhub.compare.selectors.comparisons import Comparison
from benchhub.results.evidence import median_of
from benchhub.results.models import ResultEvidence

# The percentiles shown against clients: the agent's sampled log gives p50, p90, p99, p99.9 and
# the maximum (docs/runner-api.md, "Evidence"); the tail past p99 rests on too few sampled
# transactions per repeat to draw a curve from.
CURVE_PERCENTILES = ("p50_ms", "p90_ms", "p99_ms")


def comparison_latency(comparison: Comparison) -> dict[int, dict[int, dict[str, float | None]]]:
    """Series run id -> clients -> {"p50_ms", "p90_ms", "p99_ms"}: each percentile's median over
    the valid repeats of the series' set (series.pooled) that carry it, None where none does; a
    level with no repeat carrying a percentile is absent. Only the comparison's levels. One
    query, reading only those keys of the evidence's latency (not its histogram)."""
    owner: dict[int, int] = {}
    for series in comparison.series:
        for run in series.pooled or [series.run]:
            owner.setdefault(run.id, series.run.id)
    found: dict[int, dict[int, list[tuple]]] = {s.run.id: {} for s in comparison.series}
    if not owner or not comparison.clients:
        return {}
    rows = ResultEvidence.objects.filter(
        result__run_id__in=list(owner),
        result__clients__in=comparison.clients,
        result__aborted=False,
        latency__isnull=False,
    ).values_list(
        "result__run_id",
        "result__clients",
        *(f"latency__{key}" for key in CURVE_PERCENTILES),
    )
    for run_id, clients, *values in rows:
        found[owner[run_id]].setdefault(clients, []).append(tuple(values))
    return {
        run_id: {
            clients: {
                key: median_of(_number(v[i]) for v in values)
                for i, key in enumerate(CURVE_PERCENTILES)
            }
            for clients, values in sorted(levels.items())
            if any(_number(x) is not None for v in values for x in v)
        }
        for run_id, levels in found.items()
    }


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
