"""A comparison's "why" section: at one client level, what each version's server
did, side by side, from the evidence its agent sent (results.evidence) and its OS telemetry.

The level is the one asked for (`?why=<clients>`), else the one with the largest difference
the verdicts trust: among the levels whose verdict (after Holm) is faster or slower, the one
whose tps ratio is furthest from 1; else the largest level compared. Each side reads the run
the comparison shows for that version (not the runs it pools), at that level.

The reads are compare.selectors.why_read's: two queries whatever the number of versions or
levels. This module picks the level and says why, in words.
"""

from __future__ import annotations

from benchhub.compare.assessment import Assessment
from benchhub.compare.selectors import Comparison, Why, WhySide, why_read
from benchhub.stats.verdicts import Verdict

__all__ = ["TRUSTED", "Why", "WhySide", "why_get", "why_level"]

TRUSTED = (Verdict.FASTER, Verdict.SLOWER)


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
    return why_read(comparison, clients=clients, reason=reason)
