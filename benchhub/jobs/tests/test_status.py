"""GET /api/v1/status/: queue counts, the jobs agents hold, and which agents are online."""

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from benchhub.hosts.models import Host
from benchhub.hosts.services import host_get_or_create, runner_token_create

JOB = {
    "versions": ["13", "14"],
    "workload": {"name": "select-only", "builtin": "select-only", "query_mode": "prepared"},
    "clients": [1, 2],
    "duration_s": 2,
}
PROGRESS = {"stage": "level c=2 repeat=1 version=14", "step": 3, "steps": 8, "line": "812.3 tps"}


@pytest.fixture
def bob_client(bob):
    client = APIClient()
    client.force_login(bob)
    return client


def test_it_counts_jobs_per_state_and_shows_held_jobs_with_progress(bob_client, agent):
    for _ in range(3):
        assert bob_client.post("/api/v1/jobs/", JOB, format="json").status_code == 201
    job_id = agent.client.post("/api/v1/jobs/claim/").json()["id"]
    agent.client.post(f"/api/v1/jobs/{job_id}/heartbeat/", {"progress": PROGRESS}, format="json")

    status = APIClient().get("/api/v1/status/").json()

    assert status["queue"] == {
        "queued": 2,
        "claimed": 0,
        "running": 1,
        "done": 0,
        "failed": 0,
        "cancelled": 0,
        "expired": 0,
    }
    [active] = status["active"]
    assert (active["id"], active["state"], active["claimed_host"]) == (
        job_id,
        "running",
        "bench-01",
    )
    assert (active["workload"], active["progress"]) == ("select-only", PROGRESS)


def test_it_says_which_agents_are_online_and_which_hosts_have_no_agent(db, agent, settings):
    settings.BENCHHUB_AGENT_ONLINE_S = 60
    agent.client.post("/api/v1/jobs/claim/")  # an agent asking for work is seen
    runner_token_create(host_name="bench-old")
    Host.objects.filter(name="bench-old").update(last_seen_at=timezone.now() - timedelta(minutes=5))
    runner_token_create(host_name="bench-new")
    host_get_or_create(name="a-imported")  # runs imported under its name; no agent

    hosts = APIClient().get("/api/v1/status/").json()["hosts"]

    assert [(h["name"], h["online"], h["agent"]) for h in hosts] == [
        ("bench-01", True, True),
        ("bench-new", False, True),
        ("bench-old", False, True),
        ("a-imported", False, False),
    ]
    assert hosts[0]["seen_s_ago"] < 5 and hosts[2]["seen_s_ago"] >= 300
    assert hosts[1]["last_seen_at"] is None and hosts[1]["seen_s_ago"] is None


def test_it_refuses_the_status_to_agents(agent):
    assert agent.client.get("/api/v1/status/").status_code == 403
