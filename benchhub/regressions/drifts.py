"""Slow drift as an alert: a series whose newest weeks trend (stats.drift: Mann-Kendall, with a
Theil-Sen slope of at least 0.2% a week) is stored as a Regression of kind `drift`, which a
change-point detector calls late, in pieces, or not at all.

One drift alert a series while it lasts: detecting again after each upload updates the stored
one (its window, slope and size, while untriaged) rather than adding another, and a new one is
only stored once the window has moved past the last one stored (a triaged drift is not raised
again by the same weeks of runs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from django.utils import timezone

from benchhub.regressions.models import Regression
from benchhub.regressions.selectors import SeriesPoint
from benchhub.stats.drift import WINDOW, Drift, drift

DAYS_A_WEEK = 7.0


def runs_per_week(points: Sequence[SeriesPoint]) -> float:
    """How many runs a week the points were measured at (from their start times); a run a day
    when their times are unknown or all alike."""
    times = [p.started_at for p in points if p.started_at is not None]
    if len(times) < 2:
        return 7.0
    days = (max(times) - min(times)).total_seconds() / 86400
    return (len(times) - 1) / (days / DAYS_A_WEEK) if days > 0 else 7.0


def series_drift(points: Sequence[SeriesPoint]) -> Drift | None:
    """The drift of the newest WINDOW points of a segment (stats.drift), or None."""
    window = points[-WINDOW:]
    return drift(values=[p.tps for p in window], runs_per_week=runs_per_week(window))


def drift_store(
    *,
    comparability_key: str,
    clients: int,
    host_id: int,
    workload_id: int,
    points: Sequence[SeriesPoint],
    found: Drift,
) -> tuple[Regression | None, bool]:
    """Store the drift of a segment's newest points (`points`: the segment, oldest first): the
    series' stored drift whose window's last run is still among the window's runs is this one
    (updated while new; left as it is once triaged: (None, False)); else a new one. Returns it
    and whether it is new. In the caller's transaction."""
    window = points[-found.runs :]
    inside = {p.run_id for p in window}
    stored = (
        Regression.objects.select_for_update()
        .filter(comparability_key=comparability_key, clients=clients, host_id=host_id)
        .filter(kind=Regression.Kind.DRIFT)
        .order_by("-id")
    )
    figures = _figures(window, found)
    for regression in stored:
        if regression.run_after_id in inside:
            if regression.state != Regression.State.NEW:
                return None, False
            for name, value in figures.items():
                setattr(regression, name, value)
            regression.save(update_fields=[n.removesuffix("_id") for n in figures])
            return regression, False
    regression = Regression.objects.create(
        comparability_key=comparability_key,
        clients=clients,
        host_id=host_id,
        workload_id=workload_id,
        kind=Regression.Kind.DRIFT,
        **figures,
    )
    return regression, True


def _figures(window: Sequence[SeriesPoint], found: Drift) -> dict:
    """A drift's figures: the change over the window as the Theil-Sen slope gives it, the mean
    tps of the first and last weeks of the window as its before and after."""
    weeks = found.runs / runs_per_week(window)
    week = max(1, math.ceil(found.runs / weeks)) if weeks > 0 else 7
    before = [p.tps for p in window[:week]]
    after = [p.tps for p in window[-week:]]
    return {
        "run_before_id": window[0].run_id,
        "run_after_id": window[-1].run_id,
        "before_tps": sum(before) / len(before),
        "after_tps": sum(after) / len(after),
        "before_runs": found.runs,
        "after_runs": found.runs,
        "change": (1 + found.per_week) ** weeks - 1,
        "change_low": (1 + found.low) ** weeks - 1,
        "change_high": (1 + found.high) ** weeks - 1,
        "p_value": found.p_value,
        "per_week": found.per_week,
        "redetected_at": timezone.now(),
    }
