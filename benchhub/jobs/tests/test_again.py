""" "Queue this again": the whole job with its full definition, or a job made from a run."""

import json

import pytest
from rest_framework.test import APIClient

from benchhub.compare.tests.experiment_data import E2_IDLE, e2_idle_upload, e5_upload
from benchhub.compare.tests.uploads import upload
from benchhub.jobs.models import Job
from benchhub.jobs.services import JOB_DEFINITION_FIELDS
from benchhub.results.models import Run
from benchhub.testing.payloads import run_payload

WORKLOAD = {
    **E2_IDLE,
    "level_setup": ["SELECT {clients}"],
    "params": {"idle_connections": 9000},
}
JOB = {
    "versions": ["13", "14"],
    "workload": WORKLOAD,
    "scale": 200,
    "clients": [64, 128],
    "profile_clients": 64,
    "threads_policy": "pairs",
    "level_threads": {"64": 16, "128": 32},
    "duration_s": 30,
    "level_durations": {"128": 60},
    "warmup_s": 5,
    "level_order": "shuffled",
    "shuffle_seed": 11,
    "repeats": 2,
    "config_overrides": {"max_connections": "11000"},
    "order": "sequential",
    "host": "bench-01",
    "priority": 5,
}


@pytest.fixture
def bob_client(bob):
    client = APIClient()
    client.force_login(bob)
    return client


def _run_of_job(agent, bob_client) -> Run:
    response = bob_client.post("/api/v1/jobs/", JOB, format="json")
    assert response.status_code == 201, response.content
    claim = agent.client.post("/api/v1/jobs/claim/").json()
    payload = run_payload(
        version="13.3",
        clients=(64, 128),
        job={"id": claim["id"], "attempt": claim["attempt"]},
        workload=claim["workload"],
        scale=200,
        duration_s=30.0,
    )
    uploaded = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert uploaded.status_code == 201, uploaded.content
    return Run.objects.get(uuid=payload["run_uuid"])


def test_it_queues_the_whole_job_again_with_its_full_definition(agent, bob_client, client, bob):
    run = _run_of_job(agent, bob_client)
    first = Job.objects.get()
    client.force_login(bob)

    response = client.post(f"/runs/{run.uuid}/requeue/")

    again = Job.objects.exclude(pk=first.pk).get()
    assert response["Location"] == f"/jobs/{again.pk}/"
    for name in JOB_DEFINITION_FIELDS:
        assert getattr(again, name) == getattr(first, name), name
    assert again.versions == ["13", "14"]  # the whole comparison, not the run's one version
    assert again.workload["streams"][0]["role"] == "background"
    assert again.workload["level_setup"] == ["SELECT {clients}"]
    assert (again.workload["combine"], again.workload["progress_s"]) == ("measured", 2)
    assert again.workload["catalog_entry"] == "e2-idle-connections"
    assert again.workload["params"] == {"idle_connections": 9000}
    assert again.level_threads == {"64": 16, "128": 32}
    assert (again.host.name, again.state, again.created_by) == ("bench-01", "queued", bob)


def test_it_queues_a_streams_run_without_a_job_again(agent, client, bob):
    run = e2_idle_upload(agent, version="13.3", tps=[100.0], established=[9000])
    client.force_login(bob)

    response = client.post(f"/runs/{run.uuid}/requeue/")

    job = Job.objects.get()
    assert response["Location"] == f"/jobs/{job.pk}/", response
    assert [s["name"] for s in job.workload["streams"]] == ["idle", "select-only"]
    assert job.workload["combine"] == "measured" and job.workload["progress_s"] == 2
    assert (job.threads_policy, job.threads) == ("fixed", 16)


def test_it_keeps_the_thread_pairs_of_a_run_without_a_job(agent, client, bob):
    run = e5_upload(agent, entry="e5-read-only", version="13.3", tps={52: [1.0], 208: [2.0]})
    client.force_login(bob)

    client.post(f"/runs/{run.uuid}/requeue/")

    job = Job.objects.get()
    assert job.threads_policy == "pairs"
    assert job.level_threads == {"52": 52, "208": 104}
    assert job.workload["catalog_entry"] == "e5-read-only"


def test_it_reruns_a_summary_import_of_a_builtin_for_a_minute(agent, client, bob):
    run = upload(agent, version="14.1", tps={8: [900.0]}, source="summary", duration_s=None)
    client.force_login(bob)

    response = client.post(f"/runs/{run.uuid}/requeue/")

    job = Job.objects.get()
    assert response["Location"] == f"/jobs/{job.pk}/"
    assert (job.versions, job.clients, job.duration_s) == (["14.1"], [8], 60.0)
    assert job.workload["builtin"] == "select-only"


def test_it_refuses_to_rerun_a_summary_whose_workload_was_not_published(agent, client, bob):
    unpublished = {
        "name": "published",
        "scripts": [{"name": "published", "weight": 1, "body": "-- not published"}],
    }
    run = upload(agent, version="14.1", tps={8: [900.0]}, source="summary", workload=unpublished)
    client.force_login(bob)

    response = client.post(f"/runs/{run.uuid}/requeue/", follow=True)

    assert not Job.objects.exists()
    assert "does not say what its workload ran" in response.content.decode()
