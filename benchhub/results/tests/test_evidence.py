"""A level's evidence summarized from its repeats (results.evidence.level_evidence)."""

import pytest

from benchhub.results.evidence import level_evidence
from benchhub.results.models import Result, ResultEvidence, ResultTelemetry
from benchhub.testing.payloads import evidence as evidence_payload


def _result(
    pk: int, repeat: int, *, transactions: int = 1000, telemetry: list | None = None, **fields
) -> Result:
    """A result as read with its OS telemetry joined (ResultTelemetry), none when not given."""
    result = Result(
        pk=pk, clients=8, repeat=repeat, tps=transactions / 10, transactions=transactions, **fields
    )
    row = ResultTelemetry(result=result, samples=telemetry) if telemetry is not None else None
    # Cached as select_related("os_telemetry") leaves it: nothing is read from the database.
    Result.os_telemetry.related.set_cached_value(result, row)
    return result


def _evidence(pk: int, **parts) -> ResultEvidence:
    body = evidence_payload()
    body.update(parts)
    return ResultEvidence(result_id=pk, **body)


def test_it_takes_the_median_over_repeats_of_each_figure_per_transaction():
    results = [_result(1, 1), _result(2, 2, transactions=2000), _result(3, 3, transactions=500)]
    rows = {
        1: _evidence(
            1, stats={"wal_bytes": 100_000, "database": {"blks_hit": 5000}, "checkpoints": 0}
        ),
        2: _evidence(
            2, stats={"wal_bytes": 100_000, "database": {"blks_hit": 5000}, "checkpoints": 1}
        ),
        3: _evidence(3, stats={"wal_bytes": 100_000, "checkpoints": 0}),
    }

    level = level_evidence(clients=8, results=results, evidence=rows)

    assert level.wal_bytes == pytest.approx(100.0)  # of 50, 100 and 200 bytes
    assert level.blocks_hit == pytest.approx((5.0 + 2.5) / 2)  # the repeat without it is left out
    assert level.blocks_read is None
    assert level.checkpoints == [0, 1, 0]
    assert level.evidence_repeats == [1, 2, 3]


def test_it_pools_wait_events_weighted_by_the_backends_each_repeat_saw():
    results = [_result(1, 1), _result(2, 2)]
    rows = {
        1: _evidence(1, waits={"backend_samples": 300, "events": {"CPU": 1.0}}),
        2: _evidence(2, waits={"backend_samples": 100, "events": {"Lock:tuple": 1.0}}),
    }

    level = level_evidence(clients=8, results=results, evidence=rows)

    assert level.waits == {"CPU": 0.75, "Lock:tuple": 0.25}
    assert level.wait_samples == 400


def test_it_leaves_out_aborted_repeats_and_merges_statements_by_query():
    results = [_result(1, 1), _result(2, 2), _result(3, 3, aborted=True)]
    statement = {"query": "SELECT 1", "calls": 10, "total_ms": 5.0, "mean_ms": 0.5}
    rows = {
        1: _evidence(1, statements=[statement]),
        2: _evidence(
            2, statements=[statement, {**statement, "query": "SELECT 2", "total_ms": 1.0}]
        ),
        3: _evidence(3, statements=[{**statement, "query": "SELECT 3", "total_ms": 99.0}]),
    }

    level = level_evidence(clients=8, results=results, evidence=rows)

    assert [(s.query, s.calls, s.total_ms) for s in level.statements] == [
        ("SELECT 1", 20, 10.0),
        ("SELECT 2", 10, 1.0),
    ]
    assert level.statements[0].mean_ms == 0.5
    assert level.repeats == [1, 2]


def test_it_keeps_the_first_profile_and_histogram_with_the_repeat_they_came_from():
    results = [_result(1, 1), _result(2, 2)]
    rows = {
        1: _evidence(1, latency={"p50_ms": 1.0, "p99_ms": 3.0}, profile=None),
        2: _evidence(
            2,
            latency={
                "p50_ms": 2.0,
                "p99_ms": 5.0,
                "histogram": {"edges_ms": [0, 1], "counts": [4]},
            },
            profile={"tool": "perf", "folded": "a;b 1"},
        ),
    }

    level = level_evidence(clients=8, results=results, evidence=rows)

    assert level.latency == {"p50_ms": 1.5, "p99_ms": 4.0}
    assert (level.histogram_repeat, level.profile_repeat) == (2, 2)


def test_it_reads_the_os_telemetry_of_a_level_without_evidence():
    samples = [
        {"t": 1.0, "cpu_user_pct": 30.0, "ctx_switches_per_s": 500.0, "client_cpu_pct": 90.0},
        {"t": 2.0, "cpu_user_pct": 50.0, "ctx_switches_per_s": 700.0, "client_cpu_pct": 100.0},
    ]
    results = [_result(1, 1, telemetry=samples, client_bound=True)]

    level = level_evidence(clients=8, results=results, evidence={})

    assert not level.has_evidence
    assert level.cpu == {"cpu_user_pct": 40.0}
    assert level.context_switches == pytest.approx(600.0 / 100.0)  # per s over tps
    assert (level.client_cpu_pct, level.client_bound) == (95.0, True)
