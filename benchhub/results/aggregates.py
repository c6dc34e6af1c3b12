"""Statistics across repeats of one client level: pure functions, no database."""

import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    median: float | None
    mean: float | None
    stddev: float | None
    minimum: float | None
    maximum: float | None


def summarize(values: list[float]) -> Summary:
    """Median, mean, sample standard deviation (None below two values), min and max."""
    if not values:
        return Summary(None, None, None, None, None)
    return Summary(
        median=statistics.median(values),
        mean=statistics.fmean(values),
        stddev=statistics.stdev(values) if len(values) > 1 else None,
        minimum=min(values),
        maximum=max(values),
    )
