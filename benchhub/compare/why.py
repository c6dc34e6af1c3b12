"""A comparison's "why" section: at one client level, what each version's server
did, side by side, from the evidence its agent sent (results.evidence) and its OS telemetry.

The level is the one asked for (`?why=<clients>`), else the one with the largest difference
the verdicts trust: among the levels whose verdict (after Holm) is faster or slower, the one
whose tps ratio is furthest from 1; else the largest level compared. Each side reads the run
the comparison shows for that version (not the runs it pools), at that level.

Two queries whatever the number of versions or levels: the compared runs' results at the
level with their evidence joined, and the latency percentiles of every level of those runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import BooleanField, ExpressionWrapper, Q

from benchhub.compare.assessment import Assessment
from benchhub.compare.selectors import Comparison, Series
from benchhub.results.evidence import PERCENTILES, LevelEvidence, level_evidence, median_of
from benchhub.results.models import Result, ResultEvidence
from benchhub.stats.verdicts import Verdict

TRUSTED = (Verdict.FASTER, Verdict.SLOWER)


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


def why_level(
    comparison: Comparison, assessment: Assessment, *, asked: int | None = None
) -> tuple[int, str] | None:
    """The level of the why section and the reason for it; None without a compared level."""
    if not comparison.clients:
        return None
    if asked is not None and asked in comparison.clients:
        return asked, f"{asked} clients, as asked."
    best: tuple[float, int, str, str] | None = None
    for version in assessment.versions:
        for clients, row in version.levels.items():
            if row.corrected not in TRUSTED:
                continue
            size = abs(row.verdict.tps.value - 1)
            if best is None or size > best[0]:
                best = (size, clients, version.label, row.corrected.value)
    if best is not None:
        size, clients, label, verdict = best
        return clients, (
            f"{clients} clients: the largest difference the verdicts trust ({label} "
            f"{verdict}, tps ratio {size * 100:.1f}% from 1)."
        )
    largest = max(comparison.clients)
    return largest, (
        f"{largest} clients: no level has a faster or slower verdict, so the largest level is "
        "shown."
    )


def why_get(
    comparison: Comparison, assessment: Assessment, *, asked: int | None = None
) -> Why | None:
    """The why section of a comparison (see the module docstring); None without a level."""
    chosen = why_level(comparison, assessment, asked=asked)
    if chosen is None or not comparison.series:
        return None
    clients, reason = chosen
    run_ids = [s.run.id for s in comparison.series]
    results = list(
        Result.objects.filter(run_id__in=run_ids, clients=clients)
        .select_related("evidence")
        .only(
            "id",
            "run_id",
            "clients",
            "repeat",
            "aborted",
            "tps",
            "transactions",
            "telemetry",
            "client_bound",
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
