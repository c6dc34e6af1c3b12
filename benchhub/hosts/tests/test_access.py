"""Who may run what where: staff, a host's owners, and those granted the right per host or tag."""

import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from benchhub.hosts.access import HostForbidden, job_target_check
from benchhub.hosts.models import Host, HostGrant
from benchhub.hosts.services import host_grant_add, host_grant_remove
from benchhub.jobs.models import Job, JobSchedule
from benchhub.jobs.services import job_create_again, schedule_save
from benchhub.jobs.tests.test_queue import JOB
from benchhub.results.models import Run
from benchhub.testing.payloads import run_payload


def _client(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture
def hosts(db):
    return {
        "bench-01": Host.objects.create(name="bench-01", tags=["x86", "nvme"]),
        "bench-02": Host.objects.create(name="bench-02", tags=["arm"]),
    }


def test_it_refuses_a_person_without_a_grant_with_403_naming_the_host(hosts, mallory):
    response = _client(mallory).post("/api/v1/jobs/", {**JOB, "host": "bench-01"}, format="json")
    assert response.status_code == 403
    body = response.json()
    assert body["error"] == "forbidden_host" and "bench-01" in body["detail"]
    assert body["fields"] == {"host": [body["detail"]]}
    assert not Job.objects.exists()


def test_it_lets_staff_queue_anywhere_and_nobody_else_queue_an_unplaced_job(hosts, alice, mallory):
    assert _client(alice).post("/api/v1/jobs/", JOB, format="json").status_code == 201
    HostGrant.objects.create(host=hosts["bench-01"], user=mallory)
    refused = _client(mallory).post("/api/v1/jobs/", JOB, format="json")
    assert refused.status_code == 403 and "only staff" in refused.json()["detail"]


def test_it_grants_per_host_per_tag_per_group_and_to_owners(hosts, alice, mallory):
    b1, b2 = hosts["bench-01"], hosts["bench-02"]

    def may(host=None, tags=()):
        try:
            job_target_check(person=mallory, host=host, host_tags=list(tags))
        except HostForbidden:
            return False
        return True

    assert not may(b1) and not may(b2) and not may(tags=["arm"])
    grant = host_grant_add(by=alice, host=b1, user=mallory)
    assert may(b1) and not may(b2)
    host_grant_remove(by=alice, grant=grant)
    assert not may(b1)
    team = Group.objects.create(name="arm-team")
    mallory.groups.add(team)
    host_grant_add(by=alice, tag="arm", group=team)
    assert may(b2) and may(tags=["arm"]) and not may(b1) and not may(tags=["x86"])
    b1.owners.add(mallory)
    assert may(b1)


def test_it_lets_owners_grant_on_their_host_only(hosts, mallory, bob):
    hosts["bench-01"].owners.add(mallory)
    grant = host_grant_add(by=mallory, host=hosts["bench-01"], user=bob)
    assert grant.granted_by == mallory
    with pytest.raises(HostForbidden, match="bench-02"):
        host_grant_add(by=mallory, host=hosts["bench-02"], user=bob)
    with pytest.raises(HostForbidden, match="tag"):
        host_grant_add(by=mallory, tag="x86", user=bob)


def test_it_checks_the_right_for_schedules_and_reruns_in_the_services(hosts, agent, mallory):
    with pytest.raises(HostForbidden, match="bench-01"):
        schedule_save(
            name="nightly",
            crontab="0 2 * * *",
            template={**JOB, "host": "bench-01"},
            created_by=mallory,
        )
    assert not JobSchedule.objects.exists()
    payload = run_payload()
    assert agent.client.post("/api/v1/runs/", payload, format="json").status_code == 201
    with pytest.raises(HostForbidden, match="bench-01"):
        job_create_again(run=Run.objects.get(uuid=payload["run_uuid"]), created_by=mallory)
    assert not Job.objects.exists()


def test_it_keeps_the_invalid_mark_to_those_with_rights_with_a_reason_and_reversible(
    agent, mallory, bob
):
    payload = run_payload()
    assert agent.client.post("/api/v1/runs/", payload, format="json").status_code == 201
    marks = f"/api/v1/runs/{payload['run_uuid']}/marks/"
    refused = _client(mallory).post(marks, {"invalid": True, "reason": "x"}, format="json")
    assert refused.status_code == 403 and "bench-01" in refused.json()["detail"]
    no_reason = _client(bob).post(marks, {"invalid": True}, format="json")
    assert no_reason.status_code == 400 and "reason" in no_reason.json()["fields"]
    bob_client = _client(bob)
    assert bob_client.post(marks, {"invalid": True, "reason": "swap"}, format="json").json()[
        "invalid"
    ]
    undone = bob_client.post(marks, {"invalid": False, "reason": "was fine"}, format="json")
    assert undone.status_code == 200 and undone.json()["invalid"] is False
    verbs = [e["verb"] for e in bob_client.get("/api/v1/review/events/").json()["results"]]
    assert verbs[:2] == ["unmarked_invalid", "marked_invalid"]


def test_it_lets_owners_grant_and_withdraw_the_right_through_the_api(hosts, mallory, bob):
    hosts["bench-01"].owners.add(mallory)
    owner, other = _client(mallory), _client(bob)
    base = "/api/v1/hosts/bench-01/grants/"
    refused = other.post(base, {"user": "mallory"}, format="json")
    assert refused.status_code == 403 and "bench-01" in refused.json()["detail"]
    assert other.get(base).status_code == 403
    assert owner.post(base, {}, format="json").status_code == 400
    made = owner.post(base, {"user": "bob"}, format="json")
    assert made.status_code == 201
    assert made.json() | {"id": 0, "granted_at": ""} == {
        "id": 0,
        "host": "bench-01",
        "tag": "",
        "user": "bob",
        "group": None,
        "granted_by": "mallory",
        "granted_at": "",
    }
    assert [g["user"] for g in owner.get(base).json()] == ["bob"]
    assert owner.delete(f"{base}{made.json()['id']}/").status_code == 204
    assert not HostGrant.objects.filter(host=hosts["bench-01"]).exists()
    assert owner.get("/api/v1/hosts/nowhere/grants/").status_code == 404
