"""The agent's client keeps a job's stage within the server's 50-character column: a stage that
names a long recipe version must not turn a heartbeat or a failure report into a 400 (the lease
would lapse and the failure would go unrecorded)."""

import pytest
from benchhub_runner.transport.client import Client
from rest_framework.test import APIClient

from benchhub.jobs.models import Job
from benchhub.jobs.tests.test_queue import queue


@pytest.fixture
def bob_client(bob):
    client = APIClient()
    client.force_login(bob)
    return client


LONG = "level c=5000 repeat=10 version=master+pgxact-split-with-a-longer-label"


def test_it_cuts_a_long_stage_to_the_column_and_the_server_takes_it(live_server, agent, bob_client):
    job_id = queue(bob_client, host="bench-01")["id"]
    client = Client(server=live_server.url, token=agent.token, attempts=1, backoff_s=0.01)
    claimed = client.claim()
    assert isinstance(claimed, dict) and claimed["id"] == job_id
    client.heartbeat(job_id, {"stage": LONG, "version": "master+pgxact-split"})
    assert Job.objects.get(pk=job_id).progress["stage"] == LONG[:49] + "…"
    client.finish(job_id, outcome="failed", stage=LONG, message=f"failed at {LONG}")
    job = Job.objects.get(pk=job_id)
    assert job.state == Job.State.FAILED
    assert job.failure_stage == LONG[:49] + "…" and LONG in job.failure_message
