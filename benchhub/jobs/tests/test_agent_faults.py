"""The real agent against faults of its surroundings: the server dying while an upload is in
flight, and a work directory on a disk that fills up.

Same set-up as test_agent_e2e: gunicorn on the test database, a real Celery worker, the agent as
`benchhub-runner once` in its own process.
"""

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

from benchhub.hosts.services import runner_token_create
from benchhub.jobs.services import job_create
from benchhub.jobs.tests.test_agent_e2e import SMALL_JOB, finish, no_postgres_under, wait_for
from benchhub.results.models import Result, Run
from benchhub.testing import processes

pytestmark = pytest.mark.slow

# A backend waiting for the lock the test holds; by the lock, not by the query's text, which
# pg_stat_activity truncates (track_activity_query_size) before a long SELECT names the table.
UPLOAD_WAITING = """
SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'builds_build'::regclass
"""


def test_it_delivers_once_a_run_whose_upload_the_dying_server_dropped(server, work_dir):
    """The upload is inside its transaction, waiting for a lock the test holds on the builds
    table, when gunicorn is killed with SIGKILL; the agent keeps the run in its spool and
    delivers it once the server is back: one run, stored once."""
    _, token = runner_token_create(host_name="e2e-host")
    job = job_create(actor="test", **{**SMALL_JOB, "versions": ["14"], "clients": [1, 2]})
    env = processes.agent_env(server=server.url, token=token, work_dir=work_dir)
    # Locked before the agent starts, so its upload cannot slip through first: claiming and
    # heartbeats never touch the builds table, the upload does.
    with psycopg.connect(processes.current_database_url()) as blocker:
        blocker.execute("LOCK TABLE builds_build IN ACCESS EXCLUSIVE MODE")
        agent = processes.agent_once(env=env, deliver_wait_s=300)
        with psycopg.connect(processes.current_database_url(), autocommit=True) as probe:
            wait_for(
                lambda: probe.execute(UPLOAD_WAITING).fetchone()[0] > 0,
                timeout_s=180,
                what="the upload to be in flight",
            )
        os.killpg(server.process.pid, signal.SIGKILL)
        server.process.wait(timeout=10)
        spool = work_dir / "spool"
        assert list(spool.glob("*.json")), "the run is not in the spool"
        blocker.rollback()  # the dead worker's transaction can only roll back now
    assert Run.objects.filter(job=job).count() == 0
    server.start()
    output = finish(agent, timeout_s=300)
    assert agent.returncode == 0, output
    job.refresh_from_db()
    assert job.state == "done", (job.failure_stage, job.failure_message, output)
    assert Run.objects.filter(job=job).count() == 1
    assert Result.objects.filter(run__job=job).count() == 2
    assert not list(spool.glob("*.json"))
    assert no_postgres_under(work_dir)


@pytest.fixture
def small_disk():
    """A 20 MB tmpfs: too small for a PostgreSQL cluster. Mounting needs root."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    path = Path(tempfile.mkdtemp(prefix="benchhub-small-disk-"))
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=20m,mode=0755", "tmpfs", str(path)], check=True
    )
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)
        shutil.rmtree(path, ignore_errors=True)


def test_it_fails_the_job_at_initdb_with_a_clear_message_on_a_full_disk(server, small_disk):
    _, token = runner_token_create(host_name="e2e-host")
    job = job_create(actor="test", **{**SMALL_JOB, "versions": ["14"], "clients": [1]})
    env = processes.agent_env(server=server.url, token=token, work_dir=small_disk)
    started = time.monotonic()
    agent = processes.agent_once(env=env)
    output = finish(agent, timeout_s=180)
    assert agent.returncode == 1, output
    job.refresh_from_db()
    assert job.state == "failed", output
    assert job.failure_stage in ("initdb", "setup"), (job.failure_stage, job.failure_message)
    # PostgreSQL's own words: "could not extend file ...  HINT: Check free disk space."
    assert "disk space" in job.failure_message, job.failure_message
    assert no_postgres_under(small_disk)
    print(f"failed at {job.failure_stage} after {time.monotonic() - started:.1f} s")
