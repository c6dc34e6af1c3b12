"""Parse pgbench's per-transaction log (``-l`` without ``--aggregate-interval``) into a series.

Line layout (space separated, no header; see the reference notes §9.2)::

    client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]

``time`` is the latency in µs, or a word for a transaction without one: ``skipped`` (``-R`` with
``-L``), ``failed``, ``serialization``, ``deadlock`` or ``other`` (15+). The optional 7th column
is the lag (``--rate``) or the retries (``--max-tries`` != 1); with 8 columns it is both. A
single line cannot tell which a 7th column is, so :func:`parse_transaction_log` takes
``seventh_column`` and otherwise guesses from the words in the log: ``skipped`` only happens with
``--rate`` (lag), failure words without ``skipped`` suggest retries, anything else means lag.

Transactions are bucketed by completion time into intervals of ``interval_s`` seconds starting
at the whole second of the first completion (the log does not say when the run started). Gaps
become empty intervals, as in pgbench's own aggregate log. Percentiles (p50, p90, p95, p99) use
linear interpolation over the successful transactions' latencies.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from .errors import PgbenchParseError, never_raises_other
from .series import IntervalStats, LogSeries, mean_and_stddev, percentile
from .text import split_lines, to_int

_LINE = re.compile(
    r"^(\d+) (\d+) (?P<time>\d+|skipped|failed|serialization|deadlock|other) (\d+) "
    r"(?P<epoch>\d+) (?P<us>\d+)(?: (?P<c7>\d+))?(?: (?P<c8>\d+))?$"
)
_FAILURE_WORDS = frozenset({"failed", "serialization", "deadlock", "other"})
# A corrupt timestamp must not make us allocate billions of empty intervals.
MAX_INTERVALS = 1_000_000

SeventhColumn = Literal["lag", "retries"]


@dataclass
class _Transaction:
    completed: float
    latency_us: int | None
    word: str | None
    lag_us: int | None
    retries: int | None


@dataclass
class _Row:
    line: re.Match[str]

    def transaction(self, seventh: SeventhColumn) -> _Transaction:
        time, c7, c8 = self.line["time"], self.line["c7"], self.line["c8"]
        lag = retries = None
        if c8 is not None:
            lag, retries = to_int(c7), to_int(c8)
        elif c7 is not None and seventh == "lag":
            lag = to_int(c7)
        elif c7 is not None:
            retries = to_int(c7)
        return _Transaction(
            completed=to_int(self.line["epoch"]) + to_int(self.line["us"]) / 1e6,
            latency_us=to_int(time) if time.isdigit() else None,
            word=None if time.isdigit() else time,
            lag_us=lag,
            retries=retries,
        )


def _rows(lines: Iterable[str]) -> list[_Row]:
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        match = _LINE.match(line.strip())
        if match is None:
            raise PgbenchParseError(
                f"line {number} is not a pgbench per-transaction log line ('client_id "
                f"transaction_no time script_no time_epoch time_us [lag] [retries]'): "
                f"{line[:80]!r}"
            )
        rows.append(_Row(match))
    if not rows:
        raise PgbenchParseError("no per-transaction log lines found")
    return rows


def _guess_seventh(rows: list[_Row]) -> SeventhColumn:
    words = {row.line["time"] for row in rows}
    return "retries" if "skipped" not in words and words & _FAILURE_WORDS else "lag"


def interval_stats(start: int, interval_s: int, txs: list[_Transaction]) -> IntervalStats:
    """Statistics of the transactions completed in one interval (exposed for the tests)."""
    latencies = sorted(tx.latency_us / 1000 for tx in txs if tx.latency_us is not None)
    lags = [tx.lag_us / 1000 for tx in txs if tx.lag_us is not None]
    retries = [tx.retries for tx in txs if tx.retries is not None]
    words = [tx.word for tx in txs if tx.word is not None]
    mean, stddev = mean_and_stddev(sum(latencies), sum(x * x for x in latencies), len(latencies))
    return IntervalStats(
        start=start,
        interval_s=interval_s,
        transactions=len(latencies),
        tps=len(latencies) / interval_s,
        failed=sum(word in _FAILURE_WORDS for word in words),
        skipped=words.count("skipped"),
        retried=sum(r > 0 for r in retries) if retries else None,
        retries=sum(retries) if retries else None,
        serialization_failures=words.count("serialization"),
        deadlock_failures=words.count("deadlock"),
        latency_avg_ms=mean,
        latency_stddev_ms=stddev,
        latency_min_ms=latencies[0] if latencies else None,
        latency_max_ms=latencies[-1] if latencies else None,
        p50_ms=percentile(latencies, 0.50),
        p90_ms=percentile(latencies, 0.90),
        p95_ms=percentile(latencies, 0.95),
        p99_ms=percentile(latencies, 0.99),
        lag_avg_ms=sum(lags) / len(lags) if lags else None,
        lag_max_ms=max(lags) if lags else None,
    )


def _bucketed(txs: list[_Transaction], interval_s: int) -> tuple[int, list[list[_Transaction]]]:
    first = int(min(tx.completed for tx in txs))
    count = int((max(tx.completed for tx in txs) - first) // interval_s) + 1
    if count > MAX_INTERVALS:
        raise PgbenchParseError(
            f"log timestamps span {count} intervals of {interval_s} s; they look corrupt"
        )
    buckets: list[list[_Transaction]] = [[] for _ in range(count)]
    for tx in txs:
        buckets[int((tx.completed - first) // interval_s)].append(tx)
    return first, buckets


@never_raises_other
def parse_transaction_log(
    lines: str | Iterable[str],
    interval_s: int = 1,
    *,
    seventh_column: SeventhColumn | None = None,
) -> LogSeries:
    """Turn a per-transaction log (one or several threads' files, concatenated) into a series.

    ``lines`` is the log text or its lines. Raises :class:`PgbenchParseError` naming the first
    line that is not a log line, or when there is none. ``interval_s`` must be positive.
    """
    if not isinstance(interval_s, int) or interval_s <= 0:
        raise PgbenchParseError(f"interval_s must be a positive integer, not {interval_s!r}")
    rows = _rows(split_lines(lines) if isinstance(lines, str) else lines)
    seventh = seventh_column or _guess_seventh(rows)
    txs = [row.transaction(seventh) for row in rows]
    first, buckets = _bucketed(txs, interval_s)
    series = LogSeries(kind="txlog")
    for index, bucket in enumerate(buckets):
        series.intervals.append(interval_stats(first + index * interval_s, interval_s, bucket))
    series.total = interval_stats(first, interval_s * len(buckets), txs)
    _drop_undetailed_failures(series, rows)
    return series


def _drop_undetailed_failures(series: LogSeries, rows: list[_Row]) -> None:
    """Without ``--failures-detailed`` the log cannot split failures, so say nothing of them."""
    if {row.line["time"] for row in rows} & {"serialization", "deadlock"}:
        return
    for stats in [*series.intervals, series.total]:
        if stats is not None:
            stats.serialization_failures = stats.deadlock_failures = None
