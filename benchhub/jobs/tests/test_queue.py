"""The queue: creating jobs, claiming in order, heartbeats, leases, cancelling, finishing."""

import json
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIClient

from benchhub.hosts.models import Host, RunnerToken
from benchhub.hosts.services import runner_token_create
from benchhub.jobs.models import Job
from benchhub.jobs.serializers import JobClaimOutSerializer
from benchhub.jobs.services import job_claim, jobs_expire_leases
from benchhub.results.models import Run
from benchhub.testing.payloads import run_payload

JOB = {
    "versions": ["13", "14"],
    "workload": {"name": "select-only", "builtin": "select-only", "query_mode": "prepared"},
    "scale": 1,
    "clients": [1, 2],
    "duration_s": 2,
    "repeats": 1,
}


@pytest.fixture
def bob_client(bob):
    client = APIClient()
    client.force_login(bob)
    return client


def queue(client, **overrides):
    response = client.post("/api/v1/jobs/", {**JOB, **overrides}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def claim(agent):
    return agent.client.post("/api/v1/jobs/claim/")


def test_it_queues_a_job_with_defaults(bob_client):
    job = queue(bob_client)
    assert (job["state"], job["order"], job["threads_policy"], job["attempt"]) == (
        "queued",
        "interleaved",
        "clients",
        0,
    )
    assert [e["kind"] for e in job["events"]] == ["queued"]
    assert job["created_by"] == "bob"


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"versions": []}, "versions"),
        ({"versions": ["fourteen"]}, "versions[0]"),
        ({"clients": [0]}, "clients[0]"),
        ({"duration_s": None}, "duration_s"),
        ({"transactions_per_client": 100}, "duration_s"),
        ({"threads_policy": "fixed"}, "threads"),
        ({"host": "nowhere"}, "host"),
        ({"config_overrides": {"Shared Buffers": "1GB"}}, "config_overrides"),
        ({"repeats": "3"}, "repeats"),
    ],
)
def test_it_names_the_bad_field_of_a_job(bob_client, overrides, field):
    response = bob_client.post("/api/v1/jobs/", {**JOB, **overrides}, format="json")
    assert response.status_code == 400
    assert field in response.json()["fields"], response.json()
    assert Job.objects.count() == 0


def test_it_refuses_to_queue_for_anonymous_users_and_agents(anon_client, agent):
    assert anon_client.post("/api/v1/jobs/", JOB, format="json").status_code in (401, 403)
    assert agent.client.post("/api/v1/jobs/", JOB, format="json").status_code == 403
    assert agent.client.get("/api/v1/jobs/").status_code == 403


def test_it_hands_out_by_priority_then_age(bob_client, agent):
    old = queue(bob_client)
    urgent = queue(bob_client, priority=10)
    new = queue(bob_client)
    order = []
    for _ in range(3):
        job = claim(agent).json()
        order.append(job["id"])
        agent.client.post(
            f"/api/v1/jobs/{job['id']}/finish/",
            {"outcome": "failed", "stage": "provision", "message": "test"},
            format="json",
        )
    assert order == [urgent["id"], old["id"], new["id"]]
    assert claim(agent).status_code == 204


def test_it_matches_jobs_to_hosts_by_name_and_tags(bob_client, agent, other_agent):
    Host.objects.filter(name="bench-02").update(tags=["nvme", "big"])
    for_02 = queue(bob_client, host="bench-02")
    tagged = queue(bob_client, host_tags=["nvme"])
    assert claim(agent).status_code == 204
    assert claim(other_agent).json()["id"] == for_02["id"]
    Job.objects.filter(pk=for_02["id"]).update(state="done", lease_expires_at=None)
    assert claim(other_agent).json()["id"] == tagged["id"]


def test_it_takes_the_job_back_from_an_agent_that_claims_again(bob_client, agent):
    first = queue(bob_client)
    assert claim(agent).json()["id"] == first["id"]
    again = claim(agent).json()
    assert again["id"] == first["id"] and again["attempt"] == 2
    kinds = [e["kind"] for e in bob_client.get(f"/api/v1/jobs/{first['id']}/").json()["events"]]
    assert kinds == ["queued", "claimed", "requeued", "claimed"]


def test_it_renews_the_lease_and_stores_progress_on_a_heartbeat(bob_client, agent):
    job = queue(bob_client)
    claimed = claim(agent).json()
    progress = {"version": "13", "clients": 2, "repeat": 1, "line": "progress: 1.0 s, 812.3 tps"}
    reply = agent.client.post(
        f"/api/v1/jobs/{job['id']}/heartbeat/", {"progress": progress}, format="json"
    ).json()
    assert reply["cancel"] is False
    assert reply["lease_expires_at"] >= claimed["lease_expires_at"]
    seen = bob_client.get(f"/api/v1/jobs/{job['id']}/").json()
    assert (seen["state"], seen["progress"]) == ("running", progress)


def test_it_takes_heartbeats_only_from_the_holder(bob_client, agent, other_agent):
    job = queue(bob_client)
    claim(agent)
    response = other_agent.client.post(f"/api/v1/jobs/{job['id']}/heartbeat/", {}, format="json")
    assert response.status_code == 409
    assert response.json()["error"] == "lease_lost"


def test_it_tells_the_agent_of_a_cancelled_job_to_stop(bob_client, agent):
    job = queue(bob_client)
    claim(agent)
    assert bob_client.post(f"/api/v1/jobs/{job['id']}/cancel/").json()["state"] == "cancelled"
    reply = agent.client.post(f"/api/v1/jobs/{job['id']}/heartbeat/", {}, format="json").json()
    assert reply["cancel"] is True
    assert bob_client.post(f"/api/v1/jobs/{job['id']}/cancel/").status_code == 409


def _upload_for(agent, job, version):
    payload = run_payload(
        version=version, host=agent.host_name, job={"id": job["id"], "attempt": job["attempt"]}
    )
    return agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )


def test_it_needs_one_run_per_version_before_done(bob_client, agent):
    queue(bob_client)
    job = claim(agent).json()
    finish = {"outcome": "done"}
    assert _upload_for(agent, job, "13.23").status_code == 201
    refused = agent.client.post(f"/api/v1/jobs/{job['id']}/finish/", finish, format="json")
    assert refused.status_code == 409 and "1 of 2" in refused.json()["detail"]
    assert _upload_for(agent, job, "14.20").status_code == 201
    done = agent.client.post(f"/api/v1/jobs/{job['id']}/finish/", finish, format="json").json()
    assert done["state"] == "done" and len(done["runs"]) == 2


def test_it_answers_a_retried_upload_with_the_stored_run_after_the_job_is_done(bob_client, agent):
    # The agent's first POST stored the run but its answer was lost; the retry comes after the
    # job finished, when an upload for that attempt is refused as stale.
    queue(bob_client, versions=["13"])
    job = claim(agent).json()
    payload = run_payload(
        version="13.23", host=agent.host_name, job={"id": job["id"], "attempt": job["attempt"]}
    )
    body = {"data": json.dumps(payload), "content_type": "application/json"}
    assert agent.client.post("/api/v1/runs/", **body).status_code == 201
    finish = {"outcome": "done"}
    agent.client.post(f"/api/v1/jobs/{job['id']}/finish/", finish, format="json")
    assert Job.objects.get(pk=job["id"]).state == "done"
    retry = agent.client.post("/api/v1/runs/", **body)
    assert retry.status_code == 200, retry.content
    assert retry.json()["run_uuid"] == payload["run_uuid"]
    assert Run.objects.filter(uuid=payload["run_uuid"]).count() == 1


def test_it_stores_a_failure_with_its_stage(bob_client, agent):
    queue(bob_client)
    job = claim(agent).json()
    body = {"outcome": "failed", "stage": "initdb", "message": "initdb: could not create dir"}
    agent.client.post(f"/api/v1/jobs/{job['id']}/finish/", body, format="json")
    stored = Job.objects.get(pk=job["id"])
    assert (stored.state, stored.failure_stage) == ("failed", "initdb")
    assert "could not create" in stored.failure_message


def test_it_requeues_a_lapsed_lease_and_discards_the_abandoned_attempt(bob_client, agent):
    queue(bob_client, max_attempts=2)
    job = claim(agent).json()
    assert _upload_for(agent, job, "13.23").status_code == 201
    Job.objects.filter(pk=job["id"]).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert jobs_expire_leases() == 1
    assert Job.objects.get(pk=job["id"]).state == "queued"
    assert Run.objects.count() == 0
    # The old attempt's agent is refused from now on.
    assert _upload_for(agent, job, "14.20").status_code == 409
    second = claim(agent).json()
    assert second["attempt"] == 2
    Job.objects.filter(pk=job["id"]).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    jobs_expire_leases()
    assert Job.objects.get(pk=job["id"]).state == "expired"


def test_it_leaves_a_live_lease_alone(bob_client, agent):
    queue(bob_client)
    claim(agent)
    assert jobs_expire_leases() == 0


@pytest.mark.django_db(transaction=True)
def test_it_never_gives_one_job_to_two_of_twenty_agents_claiming_at_once():
    tokens = [runner_token_create(host_name=f"agent-{i:02d}")[0] for i in range(20)]
    for _ in range(12):
        Job.objects.create(versions=["14"], workload=JOB["workload"], clients=[1], duration_s=1)
    barrier = threading.Barrier(len(tokens))
    claimed: list[int | None] = []
    lock = threading.Lock()

    def agent(token: RunnerToken) -> None:
        try:
            barrier.wait()
            job = job_claim(token=token)
            with lock:
                claimed.append(job.pk if job else None)
        finally:
            connection.close()

    threads = [threading.Thread(target=agent, args=(t,)) for t in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    got = [pk for pk in claimed if pk is not None]
    assert len(claimed) == 20
    assert len(got) == 12 and len(set(got)) == 12
    assert Job.objects.filter(state="claimed").count() == 12
    assert set(Job.objects.values_list("claimed_by__host__name", flat=True)).issubset(
        {f"agent-{i:02d}" for i in range(20)}
    )


def test_it_queues_again_the_job_a_stopping_agent_releases(bob_client, agent):
    job = queue(bob_client)
    claim(agent)
    response = agent.client.post(
        f"/api/v1/jobs/{job['id']}/release/", {"reason": "SIGTERM"}, format="json"
    )
    assert response.status_code == 200
    stored = Job.objects.get(pk=job["id"])
    assert (stored.state, stored.attempt, stored.claimed_by) == ("queued", 1, None)
    assert "SIGTERM" in stored.events.last().message


class _BuiltPerReply(JobClaimOutSerializer):
    """The claim's reply as DRF builds it: fields from the model for every instance, runs read
    through the relation."""

    def get_fields(self):
        return serializers.ModelSerializer.get_fields(self)

    def get_runs(self, job):
        return [str(run.uuid) for run in job.runs.all()]


def test_a_claim_replies_with_what_drf_makes_of_the_stored_job(bob_client, agent, other_agent):
    first = queue(bob_client)
    claimed = claim(agent).json()
    assert _upload_for(agent, claimed, "13.23").status_code == 201
    assert _upload_for(agent, claimed, "14.20").status_code == 201
    # Queued again with its runs kept: the reply carries them, in the relation's order.
    Job.objects.filter(pk=first["id"]).update(state="queued", claimed_by=None)
    named = queue(bob_client, host="bench-02")

    for runner, expected in ((agent, first["id"]), (other_agent, named["id"])):
        reply = claim(runner).json()
        stored = Job.objects.get(pk=expected)
        assert reply == json.loads(JSONRenderer().render(_BuiltPerReply(stored).data))
        assert (reply["id"], reply["created_by"]) == (expected, "bob")
        assert reply["claimed_host"] == runner.host_name
    assert len(set(_BuiltPerReply(Job.objects.get(pk=first["id"])).data["runs"])) == 2
