"""The claim response is what the agent parses: jobs queued through the API reach the agent's
typed job (benchhub_runner.jobspec) whole, whatever fields they use."""

import pytest
from benchhub_runner.jobspec import job_parse
from rest_framework.test import APIClient

from benchhub.workloads.catalog import entry_list

JOB = {
    "versions": ["9.6", "15.18+slow-commit", "master+pgxact-split"],
    "workload": {
        "name": "e2-like",
        "setup": ["CREATE TABLE IF NOT EXISTS t (id int)"],
        "level_setup": ["TRUNCATE t"],
        "query_mode": "prepared",
        "streams": [
            {
                "name": "idle",
                "role": "background",
                "clients": 50,
                "threads": 2,
                "scripts": [{"name": "idle", "weight": 1, "body": "SELECT pg_sleep(2000);"}],
            },
            {"name": "select-only", "builtin": "select-only"},
        ],
        "combine": "measured",
        "progress_s": 5,
    },
    "scale": 10,
    "clients": [52, 208],
    "threads_policy": "pairs",
    "level_threads": {"52": 52, "208": 104},
    "duration_s": 30,
    "repeats": 3,
    "config_overrides": {"max_connections": "1000", "shared_buffers": "1GB"},
    "order": "sequential",
}


@pytest.fixture
def bob_client(bob):
    client = APIClient()
    client.force_login(bob)
    return client


def queue_and_claim(bob_client, agent, job):
    response = bob_client.post("/api/v1/jobs/", job, format="json")
    assert response.status_code == 201, response.content
    claimed = agent.client.post("/api/v1/jobs/claim/")
    assert claimed.status_code == 200
    return claimed.json()


def test_it_hands_the_agent_every_field_it_runs_on(bob_client, agent):
    job = job_parse(queue_and_claim(bob_client, agent, JOB))

    assert job.versions == ("9.6", "15.18+slow-commit", "master+pgxact-split")
    assert (job.attempt, job.claimed_host, job.order) == (1, "bench-01", "sequential")
    assert (job.clients, job.repeats, job.scale, job.duration_s) == ((52, 208), 3, 10, 30.0)
    assert (job.threads_for(52), job.threads_for(208)) == (52, 104)
    assert job.config_overrides == JOB["config_overrides"]
    idle, measured = job.workload.streams
    assert (idle.role, idle.clients, idle.scripts[0].body) == (
        "background",
        50,
        "SELECT pg_sleep(2000);",
    )
    assert (measured.role, measured.builtin, measured.clients) == ("measured", "select-only", None)
    assert (job.workload.combine, job.workload.progress_s) == ("measured", 5)


@pytest.mark.parametrize("entry", [entry.id for entry in entry_list()])
def test_every_catalog_workload_reaches_the_agent_whole(bob_client, agent, entry):
    job = job_parse(
        queue_and_claim(bob_client, agent, {"versions": ["13"], "workload": {"catalog": entry}})
    )

    assert job.workload.definition["catalog_entry"] == entry
    assert job.workload.name == entry
