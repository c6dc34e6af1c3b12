"""A job's profiled level (`profile_clients`): validated against its clients, kept, claimed."""

import pytest
from rest_framework.test import APIClient

from benchhub.jobs.models import Job

JOB = {
    "versions": ["13", "14"],
    "workload": {"name": "select-only", "builtin": "select-only"},
    "scale": 1,
    "clients": [1, 8, 32],
    "duration_s": 5,
}


@pytest.fixture
def bob_client(bob):
    client = APIClient()
    client.force_login(bob)
    return client


def test_it_hands_the_profiled_level_to_the_agent_in_the_claim(bob_client, agent):
    response = bob_client.post("/api/v1/jobs/", {**JOB, "profile_clients": 8}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["profile_clients"] == 8

    claimed = agent.client.post("/api/v1/jobs/claim/").json()

    assert claimed["profile_clients"] == 8
    assert bob_client.get(f"/api/v1/jobs/{claimed['id']}/").json()["profile_clients"] == 8


def test_it_leaves_the_profiled_level_null_by_default(bob_client, agent):
    assert bob_client.post("/api/v1/jobs/", JOB, format="json").status_code == 201
    assert agent.client.post("/api/v1/jobs/claim/").json()["profile_clients"] is None


@pytest.mark.parametrize("value", [16, 0, "8", 8.5])
def test_it_refuses_a_profiled_level_that_is_not_one_of_the_clients(bob_client, value):
    response = bob_client.post("/api/v1/jobs/", {**JOB, "profile_clients": value}, format="json")
    assert response.status_code == 400
    assert "profile_clients" in response.json()["fields"]
    assert not Job.objects.exists()
