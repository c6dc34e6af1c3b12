"""A job may pin the pgbench client that drives all of its servers: the agent's own
(`configured`) or a version; by default the agent takes the newest it has or builds."""

import pytest
from rest_framework.test import APIClient

from benchhub.jobs.tests.test_queue import JOB


@pytest.fixture
def bob_client(bob):
    client = APIClient()
    client.force_login(bob)
    return client


@pytest.mark.parametrize("client", ["", "configured", "15.18", "15.18+slow-commit", "14beta1"])
def test_it_sends_the_pinned_client_with_the_claim(bob_client, agent, client):
    queued = bob_client.post("/api/v1/jobs/", {**JOB, "client": client}, format="json")
    assert queued.status_code == 201, queued.content
    assert queued.json()["client"] == client
    claimed = agent.client.post("/api/v1/jobs/claim/")
    assert claimed.status_code == 200, claimed.content
    assert claimed.json()["client"] == client


@pytest.mark.parametrize("client", ["newest please", "x" * 101, 15])
def test_it_refuses_a_client_that_is_no_version(bob_client, client):
    response = bob_client.post("/api/v1/jobs/", {**JOB, "client": client}, format="json")
    assert response.status_code == 400
    assert "client" in response.json()["fields"]
