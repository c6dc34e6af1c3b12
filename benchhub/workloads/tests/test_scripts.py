"""Workload scripts as the API takes them: weighted builtins, a builtin beside custom scripts."""

import pytest
from rest_framework.test import APIClient

from benchhub.jobs.models import Job


@pytest.fixture
def bob_client(bob):
    client = APIClient()
    client.force_login(bob)
    return client


def queue(client, workload):
    body = {"versions": ["14"], "workload": workload, "clients": [1], "duration_s": 5}
    return client.post("/api/v1/jobs/", body, format="json")


def test_it_keeps_weighted_builtins_with_their_weights(bob_client):
    workload = {
        "name": "mixed",
        "scripts": [
            {"builtin": "select-only", "weight": 9},
            {"builtin": "simple-update", "weight": 1},
        ],
    }
    response = queue(bob_client, workload)

    assert response.status_code == 201, response.content
    stored = Job.objects.get(pk=response.json()["id"]).workload
    assert stored["scripts"] == [
        {"name": "select-only", "builtin": "select-only", "weight": 9},
        {"name": "simple-update", "builtin": "simple-update", "weight": 1},
    ]


def test_it_keeps_a_builtin_beside_custom_scripts(bob_client):
    workload = {
        "name": "both",
        "builtin": "select-only",
        "scripts": [{"name": "now", "weight": 1, "body": "SELECT now();"}],
    }
    response = queue(bob_client, workload)

    assert response.status_code == 201, response.content
    stored = Job.objects.get(pk=response.json()["id"]).workload
    assert stored["builtin"] == "select-only" and stored["scripts"][0]["name"] == "now"


@pytest.mark.parametrize(
    ("scripts", "field"),
    [
        ([{"builtin": "select-only", "body": "SELECT 1;"}], "workload.scripts[0].body"),
        ([{"body": "SELECT 1;"}], "workload.scripts[0].name"),
        ([{"builtin": "select-only", "weight": 0}], "workload.scripts"),
    ],
)
def test_it_names_the_script_at_fault(bob_client, scripts, field):
    response = queue(bob_client, {"name": "bad", "scripts": scripts})

    assert response.status_code == 400
    assert field in response.json()["fields"], response.json()
    assert Job.objects.count() == 0
