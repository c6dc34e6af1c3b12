"""An agent's report of the runs its spool set aside: stored on its host, shown on the home page."""

import uuid

from django.test import Client

from benchhub.hosts.models import Host

ENTRY = {
    "run_uuid": str(uuid.uuid4()),
    "status": 400,
    "error": "invalid",
    "detail": "The request has invalid fields. results[0].tps: <b>negative</b>",
    "tries": 1,
    "set_aside_at": "2026-11-23T07:00:00+00:00",
}


def test_it_stores_the_set_aside_runs_on_the_agents_own_host(agent, other_agent):
    response = agent.client.post("/api/v1/hosts/spool/", {"set_aside": [ENTRY]}, format="json")
    assert response.status_code == 204
    host = Host.objects.get(name="bench-01")
    assert host.spool_set_aside == [ENTRY] and host.spool_reported_at is not None
    assert Host.objects.get(name="bench-02").spool_set_aside == []
    # The next report replaces the list: a run sent again is no longer set aside.
    assert agent.client.post("/api/v1/hosts/spool/", {"set_aside": []}, format="json").status_code
    assert Host.objects.get(name="bench-01").spool_set_aside == []


def test_it_refuses_people_and_bad_entries_naming_the_field(agent, bob):
    person = Client()
    person.force_login(bob)
    refused = person.post(
        "/api/v1/hosts/spool/", {"set_aside": [ENTRY]}, content_type="application/json"
    )
    assert refused.status_code == 403
    bad = {**ENTRY, "run_uuid": "not-a-uuid"}
    response = agent.client.post("/api/v1/hosts/spool/", {"set_aside": [bad]}, format="json")
    assert response.status_code == 400
    assert "set_aside[0].run_uuid" in response.json()["fields"]
    too_many = agent.client.post("/api/v1/hosts/spool/", {"set_aside": [ENTRY] * 51}, format="json")
    assert too_many.status_code == 400
    assert Host.objects.get(name="bench-01").spool_set_aside == []


def test_it_shows_set_aside_runs_on_the_home_page_escaped(agent, client):
    agent.client.post("/api/v1/hosts/spool/", {"set_aside": [ENTRY]}, format="json")
    page = client.get("/").content.decode()
    assert "Runs set aside by agents" in page
    assert ENTRY["run_uuid"] in page
    assert "&lt;b&gt;negative&lt;/b&gt;" in page and "<b>negative</b>" not in page


def test_it_shows_set_aside_runs_on_the_host_page_escaped(agent, client):
    assert "Runs its agent set aside" not in client.get("/hosts/bench-01/").content.decode()
    agent.client.post("/api/v1/hosts/spool/", {"set_aside": [ENTRY]}, format="json")
    page = client.get("/hosts/bench-01/").content.decode()
    assert "Runs its agent set aside" in page and ENTRY["run_uuid"] in page
    assert "&lt;b&gt;negative&lt;/b&gt;" in page and "<b>negative</b>" not in page
