"""The evidence sections as page context: the Compare page's why section
(compare.why) and the run page's evidence per level (results.evidence), with their figures
(dashboard.charts_evidence) keyed by element id for the page's JS."""

from __future__ import annotations

from typing import Any

from benchhub.compare.selectors import Comparison
from benchhub.compare.why import Why, WhySide
from benchhub.dashboard import charts_evidence
from benchhub.results.evidence import LevelEvidence


def _measured_on(side: WhySide) -> str:
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


def why_context(why: Why | None, comparison: Comparison, *, permalink: str) -> dict[str, Any]:
    """The why section's context: {"why", "why_rows", "why_figures": {element id: figure},
    "why_captions", "why_links": [(clients, query, chosen)]}; {} without a level."""
    if why is None:
        return {}
    sides = why.sides
    labels = [side.series.label for side in sides]
    figures: dict[str, Any] = {}
    if any(side.level.waits for side in sides):
        figures["why-waits"] = charts_evidence.waits_figure(
            sides=[(side.series.label, side.level.waits) for side in sides],
            title=f"wait events at {why.clients} clients",
        )
    lines = [
        (
            side.series.label,
            why.percentiles.get(side.series.run.id, {}),
            {c: a.latency_median_ms for c, a in side.series.levels.items()},
        )
        for side in sides
    ]
    if any(percentiles for _, percentiles, _ in lines):
        figures["why-percentiles"] = charts_evidence.percentiles_figure(
            lines=lines, clients=comparison.clients, title="latency percentiles over clients"
        )
    histograms = [(s.series.label, s.level.histogram) for s in sides if s.level.histogram]
    if histograms:
        figures["why-histogram"] = charts_evidence.histogram_figure(
            sides=histograms, title=f"latency distribution at {why.clients} clients"
        )
    flames = []
    for index, side in enumerate(sides):
        if side.level.profile:
            figure = charts_evidence.flame_figure(
                folded=side.level.profile["folded"], title=f"CPU profile: {side.series.label}"
            )
            if figure is not None:
                figures[f"why-flame-{index}"] = figure
                flames.append(f"why-flame-{index}")
    profiled = why.profiled
    diff_title = ""
    if len(profiled) >= 2:
        first, second = profiled[0], profiled[1]
        diff_title = f"{second.series.label} against {first.series.label}"
        figure = charts_evidence.flame_diff_figure(
            before=first.level.profile["folded"],  # type: ignore[index]
            after=second.level.profile["folded"],  # type: ignore[index]
            title=f"differential profile: {diff_title}",
        )
        if figure is not None:
            figures["why-flame-diff"] = figure
    return {
        "why": why,
        "why_labels": labels,
        "why_rows": level_rows([side.level for side in sides]),
        "why_checkpoints": [side.level.checkpoints for side in sides],
        "why_figures": figures,
        "why_flames": flames,
        "why_diff_title": diff_title,
        "why_captions": [_measured_on(side) for side in sides],
        "why_permalink": permalink,
        "why_links": [(c, f"{permalink}&why={c}", c == why.clients) for c in comparison.clients],
    }


def run_level_context(level: LevelEvidence, *, prefix: str) -> dict[str, Any]:
    """A run page level's evidence: {"evidence", "rows", "figures": {id: figure}}."""
    figures: dict[str, Any] = {}
    if level.waits:
        figures[f"{prefix}-waits"] = charts_evidence.waits_figure(
            sides=[(f"{level.clients} clients", level.waits)],
            title=f"wait events at {level.clients} clients",
        )
    if level.histogram:
        figures[f"{prefix}-histogram"] = charts_evidence.histogram_figure(
            sides=[(f"repeat {level.histogram_repeat}", level.histogram)],
            title=f"latency distribution at {level.clients} clients",
        )
    if level.profile:
        figure = charts_evidence.flame_figure(
            folded=level.profile["folded"],
            title=f"CPU profile at {level.clients} clients (repeat {level.profile_repeat})",
        )
        if figure is not None:
            figures[f"{prefix}-flame"] = figure
    return {"evidence": level, "rows": level_rows([level]), "figures": figures}
