"""The Compare page's why section, read: at one client level, what each version's server did,
side by side, from the evidence its agent sent (results.evidence) and its OS telemetry. Each side
reads the run the comparison shows for that version (not the runs it pools), at that level;
compare.why picks the level."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import BooleanField, ExpressionWrapper, Q

from benchhub.compare.selectors.comparisons import Comparison
from benchhub.compare.types import Series
from benchhub.results.evidence import PERCENTILES, LevelEvidence, level_evidence, median_of
from benchhub.results.models import Result, ResultEvidence


@dataclass
class WhySide:
    series: Series
    level: LevelEvidence


@dataclass
class Why:
    """`clients`: the level shown; `reason`: why that level, in words; `sides`: one per version,
    baseline first; `percentiles`: run id -> clients -> the level's latency percentiles (ms);
    `profiled_levels`: the levels at which a compared run has a CPU profile."""

    clients: int
    reason: str
    sides: list[WhySide]
    percentiles: dict[int, dict[int, dict[str, float]]] = field(default_factory=dict)
    profiled_levels: list[int] = field(default_factory=list)

    @property
    def any_evidence(self) -> bool:
        return any(side.level.has_evidence for side in self.sides)

    @property
    def profiled(self) -> list[WhySide]:
        return [side for side in self.sides if side.level.profile]


def why_read(comparison: Comparison, *, clients: int, reason: str) -> Why:
    """What each compared run's server did at `clients` (the why section's level, chosen by
    compare.why.why_level for `reason`), from the evidence its agent sent and its OS
    telemetry, and every level's latency percentiles and profiles. Two queries whatever the
    number of versions or levels: the compared runs' results at the level with their evidence
    and OS telemetry joined, and the latency percentiles of every level of those runs."""
    run_ids = [s.run.id for s in comparison.series]
    results = list(
        Result.objects.filter(run_id__in=run_ids, clients=clients)
        .select_related("evidence", "os_telemetry")
        .only(
            "id",
            "run_id",
            "clients",
            "repeat",
            "aborted",
            "tps",
            "transactions",
            "client_bound",
            "os_telemetry__samples",
            *(f"evidence__{name}" for name in EVIDENCE_FIELDS),
        )
        .order_by("run_id", "repeat")
    )
    sides = []
    for series in comparison.series:
        mine = [r for r in results if r.run_id == series.run.id]
        evidence = {r.pk: r.evidence for r in mine if _has_evidence(r)}
        sides.append(
            WhySide(series, level_evidence(clients=clients, results=mine, evidence=evidence))
        )
    percentiles, profiled = _levels_read(run_ids)
    return Why(clients, reason, sides, percentiles=percentiles, profiled_levels=profiled)


EVIDENCE_FIELDS = ("stats", "waits", "latency", "statements", "profile", "unavailable")


def _has_evidence(result: Result) -> bool:
    try:
        return result.evidence is not None
    except ResultEvidence.DoesNotExist:
        return False


def _levels_read(
    run_ids: list[int],
) -> tuple[dict[int, dict[int, dict[str, float]]], list[int]]:
    """Each run's latency percentiles per level (the median over repeats of each percentile),
    and the levels that have a profile, in one query that leaves the profiles unread."""
    found: dict[int, dict[int, list[dict[str, float]]]] = {r: {} for r in run_ids}
    profiled: set[int] = set()
    rows = (
        ResultEvidence.objects.filter(result__run_id__in=run_ids, result__aborted=False)
        .annotate(has_profile=ExpressionWrapper(Q(profile__isnull=False), BooleanField()))
        .values_list("result__run_id", "result__clients", "latency", "has_profile")
    )
    for run_id, clients, latency, has_profile in rows:
        if has_profile:
            profiled.add(clients)
        if latency:
            found[run_id].setdefault(clients, []).append(latency)
    out: dict[int, dict[int, dict[str, float]]] = {}
    for run_id, levels in found.items():
        out[run_id] = {}
        for clients, values in levels.items():
            medians = {k: median_of(v.get(k) for v in values) for k in PERCENTILES}
            out[run_id][clients] = {k: m for k, m in medians.items() if m is not None}
    return out, sorted(profiled)
