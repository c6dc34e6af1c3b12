"""The measurement method a job carries: warm-up, shuffled level order, per-level durations."""

import pytest
from rest_framework.test import APIClient

from benchhub.jobs.models import Job

JOB = {
    "versions": ["13", "14"],
    "workload": {"name": "select-only", "builtin": "select-only"},
    "clients": [1, 2, 2048],
    "duration_s": 120,
}


@pytest.fixture
def bob_client(bob):
    client = APIClient()
    client.force_login(bob)
    return client


def queue(client, **overrides):
    return client.post("/api/v1/jobs/", {**JOB, **overrides}, format="json")


@pytest.mark.parametrize(
    ("overrides", "warmup"),
    [
        ({}, 12.0),  # 10% of 120 s
        ({"duration_s": 5}, 2.0),  # at least 2 s
        ({"duration_s": 3600}, 30.0),  # at most 30 s
        ({"duration_s": None, "transactions_per_client": 100}, 2.0),
        ({"warmup_s": 0}, 0.0),
        ({"warmup_s": 45}, 45.0),
    ],
)
def test_it_stores_the_warm_up_the_job_runs_with(bob_client, overrides, warmup):
    response = queue(bob_client, **overrides)

    assert response.status_code == 201, response.content
    assert response.json()["warmup_s"] == warmup
    assert Job.objects.get().warmup_s == warmup


def test_it_draws_and_keeps_a_seed_for_a_shuffled_order(bob_client, agent):
    drawn = queue(bob_client, level_order="shuffled").json()
    given = queue(bob_client, level_order="shuffled", shuffle_seed=42).json()
    plain = queue(bob_client).json()

    assert drawn["shuffle_seed"] is not None and given["shuffle_seed"] == 42
    assert (plain["level_order"], plain["shuffle_seed"]) == ("given", None)
    claim = agent.client.post("/api/v1/jobs/claim/").json()
    assert (claim["level_order"], claim["shuffle_seed"]) == ("shuffled", drawn["shuffle_seed"])
    assert claim["warmup_s"] == 12.0


def test_it_sends_the_per_level_durations_to_the_agent(bob_client, agent):
    response = queue(bob_client, level_durations={"2048": 360})

    assert response.status_code == 201, response.content
    claim = agent.client.post("/api/v1/jobs/claim/").json()
    assert (claim["duration_s"], claim["level_durations"]) == (120.0, {"2048": 360.0})


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"level_durations": {"64": 360}}, "level_durations"),
        ({"level_durations": {"2048": 0}}, "level_durations[2048]"),
        ({"level_durations": {"2048": 100000}}, "level_durations[2048]"),
        (
            {"duration_s": None, "transactions_per_client": 10, "level_durations": {"1": 5}},
            "level_durations",
        ),
        ({"warmup_s": -1}, "warmup_s"),
        ({"warmup_s": 7200}, "warmup_s"),
        ({"level_order": "random"}, "level_order"),
        ({"level_order": "shuffled", "shuffle_seed": -3}, "shuffle_seed"),
    ],
)
def test_it_names_the_method_field_at_fault(bob_client, overrides, field):
    response = queue(bob_client, **overrides)

    assert response.status_code == 400
    assert field in response.json()["fields"], response.json()
    assert Job.objects.count() == 0


def test_it_queues_e5_as_published_with_its_two_durations(bob_client, anon_client):
    entry = anon_client.get("/api/v1/workloads/catalog/e5-read-only/").json()
    published = entry["published_job"]
    assert (published["duration_s"], published["level_durations"]) == (
        120.0,
        {"2048": 360.0, "5000": 360.0},
    )

    response = bob_client.post(
        "/api/v1/jobs/",
        {
            "versions": ["13", "14"],
            "workload": {"catalog": "e5-read-only", "params": {"scale": 1000}},
            **{k: published[k] for k in ("clients", "threads_policy", "level_threads")},
            "duration_s": published["duration_s"],
            "level_durations": published["level_durations"],
        },
        format="json",
    )

    assert response.status_code == 201, response.content
    assert Job.objects.get().level_durations == {"2048": 360.0, "5000": 360.0}
