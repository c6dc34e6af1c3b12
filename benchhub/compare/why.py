"""A comparison's "why" section: at one client level, what each version's server
did, side by side, from the evidence its agent sent (results.evidence) and its OS telemetry.

The level is the one asked for (`?why=<clients>`), else the one with the largest difference
the verdicts trust: among the levels whose verdict (after Holm) is faster or slower, the one
whose tps ratio is furthest from 1; else the largest level compared. Each side reads the run
the comparison shows for that version (not the runs it pools), at that level.

The reads are compare.selectors.why_read's: two queries whatever the number of versions or
levels. This module picks the level and says why, in words: the reason, the rows of figures
side by side and each side's caption, for the Compare page (dashboard.evidence) and the compare
API (why_data) alike.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from benchhub.compare.assessment import Assessment
from benchhub.compare.selectors.comparisons import Comparison
from benchhub.compare.selectors.why import Why, WhySide, why_read
from benchhub.results.evidence import LevelEvidence
from benchhub.stats.verdicts import Verdict

__all__ = [
    "TRUSTED",
    "Why",
    "WhySide",
    "level_rows",
    "why_caption",
    "why_data",
    "why_get",
    "why_level",
]

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


def why_caption(side: WhySide) -> str:
    """What one side of the why section was measured on, in one line."""
    level = side.level
    run = str(side.series.run.uuid)[:8]
    repeats = ", ".join(str(r) for r in level.evidence_repeats) or "none"
    text = (
        f"{side.series.label}: run {run}, {level.clients} clients, evidence from repeats {repeats}"
    )
    if level.wait_samples:
        text += (
            f"; waits from {level.wait_samples} active-backend samples every "
            f"{level.wait_interval_ms:g} ms"
            if level.wait_interval_ms
            else f"; waits from {level.wait_samples} active-backend samples"
        )
    if level.latency_transactions:
        rate = f" (sampling rate {level.sampling_rate:g})" if level.sampling_rate else ""
        text += f"; latency from {level.latency_transactions} logged transactions{rate}"
    if level.profile:
        profile = level.profile
        text += (
            f"; profile from repeat {level.profile_repeat}'s extra pass "
            f"({profile.get('tool', '?')}, {profile.get('frequency_hz', '?')} Hz, "
            f"{profile.get('seconds', '?')} s)"
        )
    return text + "."


def level_rows(levels: list[LevelEvidence]) -> list[dict[str, Any]]:
    """The figures side by side: {"name", "unit", "values": one per level, "digits"}."""
    rows = [
        ("WAL per transaction", "bytes", "wal_bytes", 0),
        ("blocks read per transaction", "8 kB blocks", "blocks_read", 3),
        ("blocks hit per transaction", "8 kB blocks", "blocks_hit", 1),
        ("context switches per transaction", "host-wide", "context_switches", 2),
        ("client CPU", "% of one core (pgbench)", "client_cpu_pct", 1),
    ]
    out = [
        {"name": name, "unit": unit, "values": [getattr(lv, attr) for lv in levels], "digits": d}
        for name, unit, attr, d in rows
    ]
    for key, label in (
        ("cpu_user_pct", "user"),
        ("cpu_system_pct", "system"),
        ("cpu_iowait_pct", "iowait"),
        ("cpu_steal_pct", "steal"),
        ("cpu_idle_pct", "idle"),
    ):
        out.append(
            {
                "name": f"host CPU {label}",
                "unit": "%",
                "values": [lv.cpu.get(key) for lv in levels],
                "digits": 1,
            }
        )
    for key in ("p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"):
        name = key.removesuffix("_ms").replace("p999", "p99.9")
        out.append(
            {
                "name": f"latency {name}",
                "unit": "ms (sampled log)",
                "values": [lv.latency.get(key) for lv in levels],
                "digits": 3,
            }
        )
    return out


def why_data(why: Why | None) -> dict[str, Any] | None:
    """The why section as JSON-ready data (the compare API's "why" key), the figures the Compare
    page's why section shows: the level and the reason for it, per side its version, run,
    caption, checkpoints, client-bound flag, waits, latency percentiles, top statements and
    what was not collected, the rows side by side (level_rows), and the levels with a CPU
    profile. The profiles' stacks are the page's flame graphs and stay out. None without a
    level."""
    if why is None:
        return None
    return {
        "clients": why.clients,
        "reason": why.reason,
        "any_evidence": why.any_evidence,
        "sides": [_side_data(side, why) for side in why.sides],
        "rows": level_rows([side.level for side in why.sides]),
        "profiled_levels": why.profiled_levels,
    }


def _side_data(side: WhySide, why: Why) -> dict[str, Any]:
    level = side.level
    return {
        "label": side.series.label,
        "run": str(side.series.run.uuid),
        "caption": why_caption(side),
        "repeats": level.repeats,
        "evidence_repeats": level.evidence_repeats,
        "checkpoints": level.checkpoints,
        "client_bound": level.client_bound,
        "waits": level.waits,
        "latency": level.latency,
        "percentiles": {
            str(clients): values
            for clients, values in why.percentiles.get(side.series.run.id, {}).items()
        },
        "statements": [{**asdict(s), "mean_ms": s.mean_ms} for s in level.statements],
        "profiled": level.profile is not None,
        "unavailable": level.unavailable,
    }
