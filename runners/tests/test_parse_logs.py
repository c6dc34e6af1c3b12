"""Tests of the per-transaction (``-l``) and aggregate (``--aggregate-interval``) log parsers.

Percentiles and means are recomputed here with :mod:`statistics`, independently of the parser.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

import pytest

from benchhub_runner.parse import PgbenchParseError, parse_aggregate_log, parse_transaction_log


def _latencies_by_second(text: str) -> dict[int, list[float]]:
    seconds: dict[int, list[float]] = defaultdict(list)
    for line in text.splitlines():
        fields = line.split()
        if fields[2].isdigit():
            seconds[int(fields[4])].append(int(fields[2]) / 1000)
    return seconds


@pytest.mark.parametrize("version", ["pg15", "pg18"])
def test_it_computes_per_second_percentiles_from_a_real_log(read_fixture, version: str):
    text = read_fixture(f"{version}-txlog-rate-latency-limit.log")
    series = parse_transaction_log(text)
    expected = _latencies_by_second(text)

    assert [i.start for i in series.intervals] == sorted(expected)
    assert len(series.intervals) >= 3
    for interval in series.intervals:
        latencies = expected[interval.start]
        cuts = statistics.quantiles(latencies, n=100, method="inclusive")
        assert interval.transactions == len(latencies) == interval.tps
        assert interval.p50_ms == pytest.approx(statistics.median(latencies))
        assert [interval.p90_ms, interval.p95_ms, interval.p99_ms] == pytest.approx(
            [cuts[89], cuts[94], cuts[98]]
        )
        assert interval.latency_avg_ms == pytest.approx(statistics.fmean(latencies))
        assert interval.latency_stddev_ms == pytest.approx(statistics.pstdev(latencies))
        assert (interval.latency_min_ms, interval.latency_max_ms) == (
            min(latencies),
            max(latencies),
        )


@pytest.mark.parametrize("version", ["pg15", "pg18"])
def test_it_counts_skipped_and_reads_lag_with_rate_and_latency_limit(read_fixture, version: str):
    text = read_fixture(f"{version}-txlog-rate-latency-limit.log")
    series = parse_transaction_log(text)
    lines = text.splitlines()

    assert series.total.skipped == sum(" skipped " in ln for ln in lines) > 0
    assert series.total.transactions + series.total.skipped == len(lines)
    lags = [int(ln.split()[6]) / 1000 for ln in lines]
    assert series.total.lag_avg_ms == pytest.approx(statistics.fmean(lags))
    assert series.total.lag_max_ms == max(lags)
    assert series.total.retries is None


@pytest.mark.parametrize("version", ["pg15", "pg18"])
def test_it_reads_failures_and_retries_of_a_real_log(read_fixture, version: str):
    text = read_fixture(f"{version}-txlog-retries.log")
    total = parse_transaction_log(text).total
    lines = [ln.split() for ln in text.splitlines()]

    assert total.serialization_failures == sum(f[2] == "serialization" for f in lines) > 0
    assert total.failed == total.serialization_failures + total.deadlock_failures
    assert total.retries == sum(int(f[6]) for f in lines)
    assert total.retried == sum(int(f[6]) > 0 for f in lines)
    assert total.lag_avg_ms is None
    assert total.transactions + total.failed == len(lines) == 400


def test_it_buckets_into_longer_intervals_and_fills_gaps():
    lines = ["0 1 1000 0 100 0", "0 2 3000 0 100 500000", "0 3 2000 0 104 0", "0 4 failed 0 107 1"]
    series = parse_transaction_log(lines, interval_s=2)

    assert [(i.start, i.transactions, i.failed) for i in series.intervals] == [
        (100, 2, 0),
        (102, 0, 0),
        (104, 1, 0),
        (106, 0, 1),
    ]
    assert series.intervals[0].tps == 1.0 and series.intervals[0].p50_ms == 2.0
    assert series.intervals[1].p50_ms is None and series.intervals[1].latency_avg_ms is None
    assert (series.total.interval_s, series.total.transactions) == (8, 3)


def test_it_can_be_told_what_the_seventh_column_is():
    lines = ["0 1 1000 0 100 0 5", "0 2 2000 0 100 1 0"]
    assert parse_transaction_log(lines).total.lag_max_ms == 0.005
    assert parse_transaction_log(lines, seventh_column="retries").total.retries == 5


@pytest.mark.parametrize("version", ["pg15", "pg18"])
def test_it_reads_real_15_column_aggregate_logs(read_fixture, version: str):
    text = read_fixture(f"{version}-agglog-rate-latency-limit.log")
    series = parse_aggregate_log(text)
    rows = [[int(x) for x in ln.split()] for ln in text.splitlines()]

    assert len(series.intervals) == len(rows) == 4
    for interval, row in zip(series.intervals, rows, strict=True):
        n = row[1]
        assert (interval.start, interval.interval_s, interval.transactions) == (row[0], 1, n)
        assert interval.latency_avg_ms == pytest.approx(row[2] / n / 1000)
        assert interval.latency_stddev_ms == pytest.approx(
            ((row[3] / n - (row[2] / n) ** 2) ** 0.5) / 1000
        )
        assert (interval.latency_min_ms, interval.latency_max_ms) == (row[4] / 1000, row[5] / 1000)
        assert interval.lag_avg_ms == pytest.approx(row[6] / n / 1000)
        assert interval.lag_max_ms == row[9] / 1000
        assert interval.skipped == row[10] and interval.p99_ms is None
    assert series.total.skipped == sum(r[10] for r in rows) > 0
    assert series.total.transactions == sum(r[1] for r in rows)


@pytest.mark.parametrize("version", ["pg15", "pg18"])
def test_it_reads_retries_and_failures_columns(read_fixture, version: str):
    text = read_fixture(f"{version}-agglog-retries.log")
    rows = [[int(x) for x in ln.split()] for ln in text.splitlines()]
    intervals = parse_aggregate_log(text).intervals

    assert [(i.retried, i.retries, i.serialization_failures, i.failed) for i in intervals] == [
        (r[11], r[12], r[13], r[13] + r[14]) for r in rows
    ]


@pytest.mark.parametrize(
    ("line", "lag", "skipped"),
    [
        ("1345828501 5601 1542744 483552416 61 2573", None, 0),
        ("1345828501 5601 1542744 483552416 61 2573 56010 560100 0 20", 0.01, 0),
        ("1345828501 5601 1542744 483552416 61 2573 56010 560100 0 20 7", 0.01, 7),
        ("1345828501 5601 1542744 483552416 61 2573 56010 560100 0 20 7 0 0 0 0 3", 0.01, 7),
    ],
)
def test_it_reads_every_aggregate_layout(line: str, lag: float | None, skipped: int):
    interval = parse_aggregate_log(line).intervals[0]
    assert (interval.transactions, interval.latency_max_ms) == (5601, 2.573)
    assert (interval.lag_avg_ms, interval.skipped) == (lag, skipped)


def test_it_infers_the_aggregate_interval():
    series = parse_aggregate_log(["100 10 1000 100000 50 150", "105 20 2000 200000 50 150"])
    assert [i.tps for i in series.intervals] == [2.0, 4.0]


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (parse_transaction_log, "", "no per-transaction log lines"),
        (parse_transaction_log, "0 1 100 0 1795264990 1\nhello\n", "line 2 is not"),
        (parse_transaction_log, "0 1 1 0 0 0\n0 2 1 0 99999999999 0\n", "look corrupt"),
        (parse_aggregate_log, "1 2 3\n", "line 1 is not a pgbench aggregate"),
        (parse_aggregate_log, "\n\n", "no aggregate log lines"),
    ],
)
def test_it_says_what_is_wrong_with_a_log(parse, text: str, message: str):
    with pytest.raises(PgbenchParseError, match=message):
        parse(text)
