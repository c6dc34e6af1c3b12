"""What every presentation shares: the version columns, medians, the runs shown."""

from __future__ import annotations

import statistics as stats

from benchhub.compare.selectors.comparisons import Comparison
from benchhub.compare.selectors.presentations import (
    MAX_PROGRESS_POINTS,
    MAX_STREAM_ROWS,
    run_ids,
)
from benchhub.compare.types import Series

__all__ = [
    "EVIDENCE_PARAMS",
    "MAX_PROGRESS_POINTS",
    "MAX_STREAM_ROWS",
    "by_label",
    "level_tps",
    "median",
    "run_ids",
    "version_labels",
]

EVIDENCE_PARAMS = ("key_type", "prefill_rows", "storage", "index")


def version_labels(comparisons: list[Comparison]) -> list[str]:
    """The columns: every series label in the order first seen (the baseline's first)."""
    labels: list[str] = []
    for comparison in comparisons:
        for series in comparison.series:
            if series.label not in labels:
                labels.append(series.label)
    return labels


def by_label(comparison: Comparison, labels: list[str]) -> list[Series | None]:
    mine = {s.label: s for s in comparison.series}
    return [mine.get(label) for label in labels]


def median(values: list[float]) -> float | None:
    return stats.median(values) if values else None


def level_tps(series: Series | None, clients: int) -> float | None:
    """The series' median tps at a level (None when it has no valid repeat there)."""
    level = series.levels.get(clients) if series else None
    return level.tps_median if level else None
