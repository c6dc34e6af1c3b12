"""Each compared version's knee (stats.knee): the client level past which its tps stops growing,
read from the repeats its verdicts are made of, in numbers for the compare API and in one line
per version for the Compare page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchhub.compare.assessment import Assessment
from benchhub.compare.selectors.comparisons import Comparison
from benchhub.stats.knee import CurveLevel, Knee, KneeRule, knee


@dataclass(frozen=True)
class VersionKnee:
    """One version's knee (None: tps grows up to its largest level) over `levels` clients."""

    label: str
    knee: Knee | None
    levels: list[int]


def comparison_knees(comparison: Comparison, assessment: Assessment) -> list[VersionKnee]:
    """Every version's knee, baseline first, at the comparison's levels, from the steady-state
    means of its pooled repeats (assessment.pooled) and their latencies."""
    out = []
    for series in comparison.series:
        repeats = assessment.pooled.get(series.run.id, {})
        levels = [
            CurveLevel(
                clients=clients,
                tps=[r.tps.value for r in repeats[clients]],
                latency_ms=[r.latency.value for r in repeats[clients] if r.latency],
            )
            for clients in comparison.clients
            if repeats.get(clients)
        ]
        out.append(VersionKnee(series.label, knee(levels), [lv.clients for lv in levels]))
    return out


RULE_TEXT = {
    KneeRule.TPS_NOT_HIGHER: "tps not significantly higher",
    KneeRule.LATENCY_FASTER_THAN_CLIENTS: "latency rises faster than clients",
}


def knee_text(version: VersionKnee) -> str:
    """The page's line: `15.4: knee at 16 clients (41,020 tps): at 32 clients tps is not
    significantly higher (Welch p 0.41).`"""
    found = version.knee
    if len(version.levels) < 2:
        return f"{version.label}: no knee, fewer than two levels with repeats."
    if found is None:
        return (
            f"{version.label}: no knee, tps grows at every level measured, up to "
            f"{version.levels[-1]} clients."
        )
    if found.rule is KneeRule.TPS_NOT_HIGHER:
        why = f"at {found.next_clients} clients tps is not significantly higher"
        why += (
            f" (Welch p {found.p_value:.2f})"
            if found.p_value is not None
            else " (too few distinct repeats for a test: not higher at all)"
        )
    else:
        why = (
            f"at {found.next_clients} clients latency rises faster than clients "
            f"({found.clients} to {found.next_clients})"
        )
    return f"{version.label}: knee at {found.clients} clients ({found.tps:,.0f} tps): {why}."


def knee_data(version: VersionKnee) -> dict[str, Any] | None:
    """The API's `knee` of a version: clients, tps (median of the level's repeats), the rule
    that fired and its words, the next level and the test's p; None without a knee."""
    found = version.knee
    if found is None:
        return None
    return {
        "clients": found.clients,
        "tps": found.tps,
        "rule": found.rule.value,
        "rule_text": RULE_TEXT[found.rule],
        "next_clients": found.next_clients,
        "p_value": found.p_value,
    }
