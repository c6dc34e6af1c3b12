"""One pgbench client for every server of a job: the newest the host has or builds for it, or
the job's pin. The installations here are directories whose pgbench and psql only say their
version (building real clients of several majors takes a compile each; test_recipe_e2e pins a
real one built from source)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from benchhub_runner.config import Config
from benchhub_runner.job.errors import StageError
from benchhub_runner.job.provisioning import choose_client
from benchhub_runner.job.runner import JobRunner
from benchhub_runner.jobspec.spec import job_parse
from benchhub_runner.servers.installation import Installation

JOB = {
    "id": 1,
    "attempt": 1,
    "versions": ["13.3", "16.2+patch"],
    "workload": {"name": "so", "builtin": "select-only"},
    "clients": [1],
    "repeats": 1,
    "duration_s": 5,
}


def bindir(root: Path, name: str, version: str | None) -> Path:
    """A bin directory; with a version, pgbench and psql that print it."""
    path = root / name / "bin"
    path.mkdir(parents=True)
    if version is not None:
        for tool in ("pgbench", "psql"):
            program = path / tool
            program.write_text(f"#!/bin/sh\necho '{tool} (PostgreSQL) {version}'\n")
            program.chmod(0o755)
    return path


def runner(tmp_path: Path, *, configured: Path | None, **job: object) -> JobRunner:
    config = Config(
        server="http://127.0.0.1:9",
        token="t",
        host="h",
        work_dir=tmp_path,
        client_bindir=configured,
    )
    spec = job_parse({**JOB, **job})
    return JobRunner(job=spec, config=config, stop=threading.Event(), report=lambda _: None)


@pytest.fixture
def installs(tmp_path: Path) -> list[Installation]:
    # A prebuilt 13 has no client programs; a build from source of 16 has both.
    return [
        Installation(
            bindir=bindir(tmp_path, "prebuilt13", None), version="13.3", origin="prebuilt"
        ),
        Installation(bindir=bindir(tmp_path, "built16", "16.2"), version="16.2", origin="built"),
    ]


def test_it_takes_the_newest_client_of_the_host_and_the_job(tmp_path, installs):
    configured = bindir(tmp_path, "configured", "15.4")
    assert choose_client(runner(tmp_path, configured=configured), installs) == installs[1].bindir
    newer = bindir(tmp_path, "newer", "18.1")
    assert choose_client(runner(tmp_path, configured=newer), installs) == newer


def test_a_tie_goes_to_the_configured_client(tmp_path, installs):
    configured = bindir(tmp_path, "configured", "16.2")
    assert choose_client(runner(tmp_path, configured=configured), installs) == configured


def test_a_job_pins_one_of_its_versions_or_the_configured_client(tmp_path, installs):
    configured = bindir(tmp_path, "configured", "18.1")
    pinned = runner(tmp_path, configured=configured, client="16.2+patch")
    assert choose_client(pinned, installs) == installs[1].bindir
    own = runner(tmp_path, configured=configured, client="configured")
    assert choose_client(own, installs) == configured


def test_a_pin_without_client_programs_fails_at_provision(tmp_path, installs):
    pinned = runner(tmp_path, configured=bindir(tmp_path, "c", "18.1"), client="13.3")
    with pytest.raises(StageError) as caught:
        choose_client(pinned, installs)
    assert caught.value.stage == "provision"
    assert "the job's client 13.3" in str(caught.value) and "prebuilt13" in str(caught.value)
