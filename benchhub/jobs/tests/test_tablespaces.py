"""Tablespaces in jobs: names only (the host maps them to directories), checked when queued,
and given only to an agent that offers them all; the E3/E4 entries name theirs."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from benchhub.hosts.models import Host
from benchhub.jobs.models import Job
from benchhub.jobs.serializers import MAX_OFFERED_TABLESPACES
from benchhub.results.models import Run
from benchhub.testing.payloads import run_payload

JOB = {
    "versions": ["14"],
    "workload": {"name": "select-only", "builtin": "select-only"},
    "scale": 1,
    "clients": [1],
    "duration_s": 2,
}


@pytest.fixture
def bob_client(bob):
    client = APIClient()
    client.force_login(bob)
    return client


def claim(agent, offered=None):
    body = {"tablespaces": offered} if offered is not None else None
    return agent.client.post("/api/v1/jobs/claim/", body, format="json")


@pytest.mark.parametrize(
    ("tablespaces", "field"),
    [
        (["/mnt/disk1"], "tablespaces[0]"),
        (["pg_global"], "tablespaces[0]"),
        (["Fast"], "tablespaces[0]"),
        (["fast", "fast"], "tablespaces"),
        ("fast", "tablespaces"),
    ],
)
def test_it_names_a_bad_tablespace_and_writes_nothing(bob_client, tablespaces, field):
    response = bob_client.post("/api/v1/jobs/", {**JOB, "tablespaces": tablespaces}, format="json")
    assert response.status_code == 400
    assert field in response.json()["fields"], response.json()
    assert Job.objects.count() == 0


def test_it_refuses_a_tablespace_the_named_host_does_not_offer(bob_client, agent):
    assert claim(agent, ["fast"]).status_code == 204
    assert Host.objects.get(name="bench-01").tablespaces == ["fast"]
    response = bob_client.post(
        "/api/v1/jobs/", {**JOB, "host": "bench-01", "tablespaces": ["slow"]}, format="json"
    )
    assert response.status_code == 400
    assert "does not offer slow" in response.json()["fields"]["tablespaces"][0]
    assert Job.objects.count() == 0
    ok = bob_client.post(
        "/api/v1/jobs/", {**JOB, "host": "bench-01", "tablespaces": ["fast"]}, format="json"
    )
    assert ok.status_code == 201, ok.content


def test_only_an_agent_offering_every_tablespace_claims_the_job(bob_client, agent, other_agent):
    job = bob_client.post(
        "/api/v1/jobs/", {**JOB, "tablespaces": ["fast", "slow"]}, format="json"
    ).json()
    assert claim(agent).status_code == 204  # an agent that offers none
    assert claim(agent, ["fast"]).status_code == 204
    claimed = claim(other_agent, ["fast", "slow", "spare"]).json()
    assert (claimed["id"], claimed["tablespaces"]) == (job["id"], ["fast", "slow"])


def test_the_claim_names_a_bad_offered_tablespace(agent):
    response = claim(agent, ["../etc"])
    assert response.status_code == 400
    assert "tablespaces[0]" in response.json()["fields"]


@pytest.mark.parametrize(
    ("offered", "field"),
    [
        ([f"t{n}" for n in range(MAX_OFFERED_TABLESPACES + 1)], "tablespaces"),
        (["t" * 64], "tablespaces[0]"),
        (["fast", "t" * 10_000], "tablespaces[1]"),
    ],
)
def test_the_claim_bounds_the_offer_naming_the_field_and_keeps_the_last(agent, offered, field):
    assert claim(agent, ["fast"]).status_code == 204
    response = claim(agent, offered)
    assert response.status_code == 400
    assert field in response.json()["fields"], response.json()
    assert Host.objects.get(name="bench-01").tablespaces == ["fast"]
    most = [f"t{n}" for n in range(MAX_OFFERED_TABLESPACES)]
    assert claim(agent, most).status_code == 204
    assert len(Host.objects.get(name="bench-01").tablespaces) == MAX_OFFERED_TABLESPACES


def test_a_job_names_at_most_8_tablespaces(bob_client):
    names = [f"t{n}" for n in range(9)]
    response = bob_client.post("/api/v1/jobs/", {**JOB, "tablespaces": names}, format="json")
    assert response.status_code == 400 and "tablespaces" in response.json()["fields"]
    assert Job.objects.count() == 0


def test_e3_and_e4_put_their_tables_where_their_params_say(bob_client):
    e3 = bob_client.post(
        "/api/v1/jobs/",
        {
            "versions": ["14"],
            "workload": {
                "catalog": "e3-key-insert",
                "params": {"table_tablespace": "disk_a", "index_tablespace": "disk_b"},
            },
        },
        format="json",
    ).json()
    assert e3["tablespaces"] == ["disk_a", "disk_b"]
    setup = e3["workload"]["setup"]
    assert any(
        s.startswith("CREATE TABLE t_key") and s.endswith("TABLESPACE disk_a") for s in setup
    )
    assert "ALTER TABLE t_key ADD PRIMARY KEY (id) USING INDEX TABLESPACE disk_b" in setup
    e4 = bob_client.post(
        "/api/v1/jobs/",
        {
            "versions": ["14"],
            "workload": {
                "catalog": "e4-write-consume",
                "params": {"even_tablespace": "disk_a", "odd_tablespace": "disk_b"},
            },
            "tablespaces": ["spare"],
        },
        format="json",
    ).json()
    assert e4["tablespaces"] == ["spare", "disk_a", "disk_b"]
    children = next(s for s in e4["workload"]["setup"] if "INHERITS" in s)
    assert "' TABLESPACE disk_a'" in children and "' TABLESPACE disk_b'" in children


def test_an_e3_tablespace_param_must_be_a_name(bob_client):
    response = bob_client.post(
        "/api/v1/jobs/",
        {
            "versions": ["14"],
            "workload": {"catalog": "e3-key-insert", "params": {"table_tablespace": "a b"}},
        },
        format="json",
    )
    assert response.status_code == 400
    assert "workload.params.table_tablespace" in response.json()["fields"], response.json()
    assert Job.objects.count() == 0


def test_the_host_page_shows_what_its_agent_offers(client, agent):
    claim(agent, ["slow", "fast"])
    html = client.get("/hosts/bench-01/").content.decode()
    assert "<code>fast</code>, <code>slow</code>" in html.split('id="tablespaces"')[1]
    claim(agent, [])  # the configuration lost them: the page says so at the next claim
    assert 'id="tablespaces"' not in client.get("/hosts/bench-01/").content.decode()


def test_the_command_queues_tablespaces_under_the_api_rules(agent):
    assert claim(agent, ["fast"]).status_code == 204
    flags = ["--versions", "14", "--clients", "1", "--duration", "2", "--host", "bench-01"]
    with pytest.raises(CommandError, match="does not offer slow"):
        call_command("job_create", *flags, "--tablespaces", "fast", "slow", stdout=StringIO())
    assert Job.objects.count() == 0
    out = StringIO()
    call_command("job_create", *flags, "--tablespaces", "fast", stdout=out)
    assert Job.objects.get(pk=int(out.getvalue())).tablespaces == ["fast"]


def tablespace_evidence(location: str) -> dict:
    return {
        "name": "fast",
        "location": location,
        "dev": "259:1",
        "mount_point": "/mnt/fast",
        "fstype": "ext4",
        "source": "/dev/nvme1n1",
        "device": "nvme1n1",
        "measured_s": 60.0,
        "read_bytes_per_s": 0.0,
        "write_bytes_per_s": 1.0e6,
        "read_iops": 0.0,
        "write_iops": 100.0,
        "util_pct": 5.0,
    }


@pytest.mark.parametrize(
    ("tablespaces", "field"),
    [
        ([tablespace_evidence("/mnt/fast/bh")] * 9, "tablespaces"),
        ([tablespace_evidence("/mnt/" + "d" * 4092)], "tablespaces[0].location"),
    ],
)
def test_a_runs_tablespace_roots_are_bounded_naming_the_field(agent, tablespaces, field):
    payload = run_payload()
    ok = {**payload, "tablespaces": [tablespace_evidence("/mnt/fast/bh")] * 8}
    response = agent.client.post(
        "/api/v1/runs/", {**payload, "tablespaces": tablespaces}, format="json"
    )
    assert response.status_code == 400
    assert field in response.json()["fields"], response.json()
    assert not Run.objects.exists()
    assert agent.client.post("/api/v1/runs/", ok, format="json").status_code == 201
