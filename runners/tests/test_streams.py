"""Streams: connection and file budgets, placeholders, how several processes' figures combine."""

import math

import pytest

from benchhub_runner.jobspec.workload import workload_parse
from benchhub_runner.measure.streams import (
    CONNECTION_MARGIN,
    ConnectionLimit,
    ConnectionsShort,
    StreamFigures,
    connections_needed,
    level_figures,
    max_connections_for,
    nofile_needed,
    pooled_latency,
    substitute,
    uses_builtin,
    workload_streams,
)

IDLE = workload_parse(
    {
        "name": "e2",
        "streams": [
            {
                "name": "idle",
                "role": "background",
                "clients": 900,
                "threads": 4,
                "scripts": [{"name": "idle", "weight": 1, "body": "SELECT pg_sleep(2000);"}],
            },
            {"name": "select-only", "role": "measured", "builtin": "select-only", "threads": 16},
        ],
        "combine": "measured",
    }
)
PER_TABLE = workload_parse(
    {
        "name": "w5",
        "streams": [
            {
                "name": "tables",
                "role": "measured",
                "per_client": True,
                "rows_per_transaction": 400,
                "scripts": [
                    {"name": "ins", "weight": 1, "body": "INSERT INTO test{n} VALUES (1);"}
                ],
            },
        ],
    }
)
SELECT_ONLY = workload_parse({"name": "so", "builtin": "select-only"})


def output(tps, transactions, latency, stddev, progress=()):
    return {
        "tps": tps,
        "transactions": transactions,
        "failed_transactions": 0,
        "latency_avg_ms": latency,
        "latency_stddev_ms": stddev,
        "aborted": False,
        "errors": [],
        "progress": [{"t": t, "tps": v, "latency_ms": lat} for t, v, lat in progress],
        "statements": [{"latency_ms": latency, "command": "INSERT"}],
    }


def figures(workload, name, outputs, **extra):
    stream = next(s for s in workload_streams(workload) if s.name == name)
    return StreamFigures(stream=stream, clients=len(outputs), threads=1, outputs=outputs, **extra)


def test_it_treats_a_plain_workload_as_one_measured_stream():
    (stream,) = workload_streams(SELECT_ONLY)
    assert (stream.name, stream.role, stream.builtin, stream.per_client) == (
        "main",
        "measured",
        "select-only",
        False,
    )
    assert uses_builtin(SELECT_ONLY)
    assert not uses_builtin(PER_TABLE)
    assert uses_builtin(IDLE)


def test_it_raises_max_connections_for_idle_connections_and_says_it_did():
    assert connections_needed(IDLE, [8, 128]) == 900 + 128 + CONNECTION_MARGIN
    assert max_connections_for(IDLE, [8, 128], None) == ConnectionLimit(1038, raised_from=100)
    assert max_connections_for(SELECT_ONLY, [4], None) == ConnectionLimit(100, raised_from=None)


@pytest.mark.parametrize("requested", [11000, 1028, 2000])
def test_the_jobs_max_connections_wins_as_given(requested: int):
    # 900 idle + 128 measured: anything that holds them is kept, margin or not.
    assert max_connections_for(IDLE, [8, 128], requested) == ConnectionLimit(requested)


def test_it_refuses_a_max_connections_below_the_streams_peak_naming_both():
    with pytest.raises(ConnectionsShort, match=r"max_connections = 1000 .* below the 1028 conn"):
        max_connections_for(IDLE, [8, 128], 1000)


def test_it_budgets_files_per_connection_and_per_process_pipe():
    # 64 single-client processes: 64 connections and two descriptors of plumbing each.
    assert nofile_needed(PER_TABLE, [8, 64]) == 64 + 2 * 64 + 1024
    assert nofile_needed(IDLE, [128]) > 900 + 128


def test_it_replaces_only_its_own_placeholders():
    sql = (
        "DO $$ BEGIN FOR i IN 1..{clients} LOOP "
        "EXECUTE format('TRUNCATE test%s', i); END LOOP; END $$"
    )
    assert substitute(sql, clients=8).startswith("DO $$ BEGIN FOR i IN 1..8 LOOP")
    assert "format('TRUNCATE test%s', i)" in substitute(sql, clients=8)
    assert substitute("{n}{n}", n=3) == "33"


def test_it_pools_latency_over_processes_by_transactions():
    mean, stddev = pooled_latency([output(100, 100, 1.0, 0.0), output(300, 300, 3.0, 0.0)])
    assert mean == pytest.approx(2.5)
    # Both processes are steady; the pooled spread is their means' spread around 2.5 ms.
    assert stddev == pytest.approx(math.sqrt((100 * 1.5**2 + 300 * 0.5**2) / 400))


def test_it_sums_per_process_tps_and_progress_of_a_per_client_stream():
    outputs = [
        output(100.0, 1000, 10.0, 1.0, [(1, 90.0, 11.0), (2, 110.0, 9.0)]),
        output(50.0, 500, 20.0, 2.0, [(1, 40.0, 25.0)]),  # no line at t=2
    ]
    level = level_figures([figures(PER_TABLE, "tables", outputs)], combine="sum")
    assert level["tps"] == 150.0
    assert level["transactions"] == 1500
    assert not level["aborted"]
    # t=2 lacks a process, so it is dropped rather than summed short.
    assert level["progress"] == [
        {"t": 1, "tps": 130.0, "latency_ms": pytest.approx((90 * 11 + 40 * 25) / 130)}
    ]
    stream = figures(PER_TABLE, "tables", outputs).to_payload()
    assert (stream["processes"], stream["tps"], stream["rows_per_s"]) == (2, 150.0, 150.0 * 400)


def test_it_takes_the_measured_stream_and_records_the_background_connections():
    idle = figures(IDLE, "idle", [], established=900)
    idle.clients = 900
    measured = figures(IDLE, "select-only", [output(5000.0, 50000, 25.6, 3.0)])
    level = level_figures([idle, measured], combine="measured")
    assert (level["tps"], level["aborted"]) == (5000.0, False)
    payload = idle.to_payload()
    assert (payload["role"], payload["established"], payload["tps"], payload["aborted"]) == (
        "background",
        900,
        None,
        False,
    )


def test_it_aborts_the_level_when_the_background_was_not_all_there():
    idle = figures(IDLE, "idle", [], established=512)
    idle.problems.append("background stream idle had 512 of 900 connections open")
    measured = figures(IDLE, "select-only", [output(5000.0, 50000, 25.6, 3.0)])
    level = level_figures([idle, measured], combine="measured")
    assert level["aborted"]
    assert "512 of 900" in level["errors"][0]


def test_an_aborted_process_aborts_its_stream_and_gives_it_no_tps():
    bad = {**output(10.0, 10, 1.0, 0.1), "aborted": True, "errors": ["client 0 aborted"]}
    stream = figures(PER_TABLE, "tables", [output(100.0, 100, 1.0, 0.1), bad])
    assert stream.aborted
    assert stream.to_payload()["tps"] is None
    assert level_figures([stream], combine="sum")["aborted"]
