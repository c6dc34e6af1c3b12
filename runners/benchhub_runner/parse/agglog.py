"""Parse pgbench's aggregated log (``--aggregate-interval=N``) into a series.

The layout depends on the version and options, so lines are read by column count (reference
notes §9.3); all values are integers, latencies and lags in µs::

    6   interval_start num_transactions sum_latency sum_latency_2 min_latency max_latency  (9.3+)
    10  ... + sum_lag sum_lag_2 min_lag max_lag                        (9.4+, --rate)
    11  ... + skipped                                                  (9.5-14, --rate and -L)
    15  ... all of the above + retried retries serialization_failures deadlock_failures (15-18)
    16  ... + other_sql_failures                                       (19devel)

15+ print all 15 columns whatever the options (unused ones are 0), so lag figures of 0 there
may just mean "no --rate". ``failed`` is the sum of the failure columns. The aggregate log holds
sums, not samples, so percentiles are ``None``; use the per-transaction log for them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import pairwise

from .errors import PgbenchParseError, never_raises_other
from .series import IntervalStats, LogSeries, mean_and_stddev
from .text import split_lines, to_int

_LINE = re.compile(r"^\d+(?: \d+)*$")
_LAYOUTS = (6, 10, 11, 15, 16)


def _columns(lines: Iterable[str]) -> list[list[int]]:
    rows = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        fields = text.split(" ") if _LINE.match(text) else []
        if len(fields) not in _LAYOUTS:
            raise PgbenchParseError(
                f"line {number} is not a pgbench aggregate log line (6, 10, 11, 15 or 16 "
                f"integers: interval_start num_transactions sum_latency ...): {line[:80]!r}"
            )
        rows.append([to_int(field) for field in fields])
    if not rows:
        raise PgbenchParseError("no aggregate log lines found")
    return rows


def _infer_interval(rows: list[list[int]]) -> int:
    steps = [b[0] - a[0] for a, b in pairwise(rows) if b[0] > a[0]]
    return min(steps) if steps else 1


def _stats(row: list[int], interval_s: int) -> IntervalStats:
    count = row[1]
    mean_us, stddev_us = mean_and_stddev(row[2], row[3], count)
    stats = IntervalStats(start=row[0], interval_s=interval_s, transactions=count)
    stats.tps = count / interval_s
    if mean_us is not None and stddev_us is not None:
        stats.latency_avg_ms, stats.latency_stddev_ms = mean_us / 1000, stddev_us / 1000
        stats.latency_min_ms, stats.latency_max_ms = row[4] / 1000, row[5] / 1000
    if len(row) >= 10 and count > 0:
        stats.lag_avg_ms, stats.lag_max_ms = row[6] / count / 1000, row[9] / 1000
    if len(row) >= 11:
        stats.skipped = row[10]
    if len(row) >= 15:
        stats.retried, stats.retries = row[11], row[12]
        stats.serialization_failures, stats.deadlock_failures = row[13], row[14]
        stats.failed = sum(row[13:])
    return stats


def _total(rows: list[list[int]], interval_s: int) -> IntervalStats:
    width = min(len(row) for row in rows)
    summed = [sum(row[i] for row in rows) for i in range(width)]
    busy = [row for row in rows if row[1] > 0] or rows
    summed[0] = rows[0][0]
    summed[4] = min(row[4] for row in busy)
    summed[5] = max(row[5] for row in busy)
    if width >= 10:
        summed[8] = min(row[8] for row in busy)
        summed[9] = max(row[9] for row in busy)
    return _stats(summed, interval_s * len(rows))


@never_raises_other
def parse_aggregate_log(lines: str | Iterable[str], interval_s: int | None = None) -> LogSeries:
    """Turn an ``--aggregate-interval`` log into a series of :class:`IntervalStats`.

    ``interval_s`` is the ``--aggregate-interval`` value; by default it is inferred from the
    smallest step between interval starts (1 for a single line). Raises
    :class:`PgbenchParseError` naming the first line that is not an aggregate log line.
    """
    if interval_s is not None and (not isinstance(interval_s, int) or interval_s <= 0):
        raise PgbenchParseError(f"interval_s must be a positive integer, not {interval_s!r}")
    rows = _columns(split_lines(lines) if isinstance(lines, str) else lines)
    step = interval_s or _infer_interval(rows)
    series = LogSeries(kind="agglog")
    series.intervals = [_stats(row, step) for row in rows]
    series.total = _total(rows, step)
    return series
