"""The evidence sections as page context: the Compare page's why section
(compare.why, whose rows and captions the compare API carries too) and the run page's evidence
per level (results.evidence), with their figures (dashboard.charts_evidence) keyed by element id
for the page's JS."""

from __future__ import annotations

from typing import Any

from benchhub.compare.selectors import Comparison
from benchhub.compare.why import Why, level_rows, why_caption
from benchhub.dashboard import charts_evidence
from benchhub.results.evidence import LevelEvidence
from benchhub.results.profiles import UNSYMBOLIZED_LIMIT, unsymbolized_share


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
        "why_captions": [why_caption(side) for side in sides],
        "why_permalink": permalink,
        "why_links": [(c, f"{permalink}&why={c}", c == why.clients) for c in comparison.clients],
    }


def run_level_context(level: LevelEvidence, *, prefix: str) -> dict[str, Any]:
    """A run page level's evidence: {"evidence", "rows", "figures": {id: figure},
    "unsymbolized_pct": the % of the profile's samples without a symbol when above
    results.profiles.UNSYMBOLIZED_LIMIT, else None}."""
    figures: dict[str, Any] = {}
    unsymbolized = None
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
        share = unsymbolized_share(level.profile["folded"])
        if share is not None and share > UNSYMBOLIZED_LIMIT:
            unsymbolized = share * 100
    return {
        "evidence": level,
        "rows": level_rows([level]),
        "figures": figures,
        "unsymbolized_pct": unsymbolized,
    }
