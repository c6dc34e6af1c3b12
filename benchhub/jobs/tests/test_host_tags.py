"""Host tags: the agent offers its configuration's tags at every claim, the server keeps them on
the host, and a job requiring tags goes only to a host that offers all of them. Bounded at the
edge: the claim, the job and the schedule name the tag at fault."""

from io import StringIO
from pathlib import Path

import pytest
from benchhub_runner.agent.loop import Agent as RunnerAgent
from benchhub_runner.config import config_load
from benchhub_runner.transport.client import Client
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from benchhub.hosts.models import Host
from benchhub.jobs.models import Job
from benchhub.jobs.services import schedule_fire

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


def _agent_client(tmp_path: Path, monkeypatch, *, server: str, token: str, tags: str) -> tuple:
    """The agent's own configuration and client, as `benchhub-runner` builds them."""
    monkeypatch.delenv("BENCHHUB_CONFIG", raising=False)
    work_dir = tmp_path / token[:12]
    work_dir.mkdir()
    path = work_dir / "agent.toml"
    path.write_text(f'server = "{server}"\nwork_dir = "{work_dir}"\n{tags}\n')
    config = config_load(path=path, overrides={"token": token})
    return config, Client(server=config.server, token=config.token, attempts=1)


def test_a_job_requiring_a_tag_goes_to_the_host_offering_it_never_to_the_other(
    live_server, agent, other_agent, bob_client, tmp_path, monkeypatch
):
    sata_config, sata = _agent_client(
        tmp_path, monkeypatch, server=live_server.url, token=agent.token, tags='tags = ["sata"]'
    )
    nvme_config, nvme = _agent_client(
        tmp_path,
        monkeypatch,
        server=live_server.url,
        token=other_agent.token,
        tags='tags = ["nvme", "56-core"]',
    )
    wanted = bob_client.post(
        "/api/v1/jobs/", {**JOB, "host_tags": ["nvme"], "priority": 10}, format="json"
    ).json()
    # The most urgent job, and yet never the sata host's: its agent polls three times, idle.
    sata_agent = RunnerAgent(config=sata_config, client=sata)
    for _ in range(3):
        assert sata_agent.once() == "idle"
    assert Job.objects.get(pk=wanted["id"]).state == "queued"
    # The nvme host had no tags on the server: its first claim stores them and matches on them.
    claimed = nvme.claim(tags=nvme_config.tags)
    assert isinstance(claimed, dict)
    assert (claimed["id"], claimed["claimed_host"]) == (wanted["id"], "bench-02")
    tags = dict(Host.objects.values_list("name", "tags"))
    assert tags == {"bench-01": ["sata"], "bench-02": ["56-core", "nvme"]}


def test_a_host_keeps_its_tags_unless_its_agent_names_some(agent, tmp_path, monkeypatch):
    Host.objects.filter(name="bench-01").update(tags=["set-in-admin"])
    agent.client.post("/api/v1/jobs/claim/", {}, format="json")
    assert Host.objects.get(name="bench-01").tags == ["set-in-admin"]
    agent.client.post("/api/v1/jobs/claim/", {"tags": ["b", "a"]}, format="json")
    assert Host.objects.get(name="bench-01").tags == ["a", "b"]
    agent.client.post("/api/v1/jobs/claim/", {"tags": []}, format="json")
    assert Host.objects.get(name="bench-01").tags == []


def test_an_agent_whose_configuration_names_no_tags_sends_none(
    live_server, agent, tmp_path, monkeypatch
):
    Host.objects.filter(name="bench-01").update(tags=["set-in-admin"])
    config, client = _agent_client(
        tmp_path, monkeypatch, server=live_server.url, token=agent.token, tags=""
    )
    assert config.tags is None
    assert client.claim(tags=config.tags) is None
    assert Host.objects.get(name="bench-01").tags == ["set-in-admin"]


def test_a_new_offer_costs_the_claim_no_query(agent):
    def claim_queries(body: dict) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert agent.client.post("/api/v1/jobs/claim/", body, format="json").status_code == 204
        return len(captured)

    claim_queries({"tags": ["nvme"], "tablespaces": ["fast"]})
    same = claim_queries({"tags": ["nvme"], "tablespaces": ["fast"]})
    changed = claim_queries({"tags": ["sata", "56-core"], "tablespaces": ["slow"]})
    assert changed == same
    host = Host.objects.get(name="bench-01")
    assert (host.tags, host.tablespaces) == (["56-core", "sata"], ["slow"])


@pytest.mark.parametrize(
    ("tags", "field"),
    [
        (["NVMe"], "tags[0]"),
        (["nvme", "*"], "tags[1]"),
        (["a" * 65], "tags[0]"),
        (["a b"], "tags[0]"),
        ([3], "tags[0]"),
        ([f"t{i}" for i in range(21)], "tags"),
        (["nvme", "nvme"], "tags"),
        ("nvme", "tags"),
    ],
)
def test_the_claim_names_a_bad_offered_tag_and_keeps_the_hosts(agent, tags, field):
    Host.objects.filter(name="bench-01").update(tags=["kept"])
    response = agent.client.post("/api/v1/jobs/claim/", {"tags": tags}, format="json")
    assert response.status_code == 400
    assert field in response.json()["fields"], response.json()
    assert Host.objects.get(name="bench-01").tags == ["kept"]


@pytest.mark.parametrize(
    ("tags", "field"),
    [
        (["NVMe"], "host_tags[0]"),
        (["ok", "-leading-dash"], "host_tags[1]"),
        (["a" * 65], "host_tags[0]"),
        ([f"t{i}" for i in range(21)], "host_tags"),
        (["nvme", "nvme"], "host_tags"),
    ],
)
def test_a_job_and_a_schedule_name_a_bad_required_tag(bob_client, tags, field):
    job = bob_client.post("/api/v1/jobs/", {**JOB, "host_tags": tags}, format="json")
    assert job.status_code == 400
    assert field in job.json()["fields"], job.json()
    schedule = bob_client.post(
        "/api/v1/schedules/",
        {"name": "nightly", "crontab": "0 2 * * *", "template": {**JOB, "host_tags": tags}},
        format="json",
    )
    assert schedule.status_code == 400
    assert f"template.{field}" in schedule.json()["fields"], schedule.json()
    assert Job.objects.count() == 0


def test_a_schedule_queues_its_required_tags(bob_client):
    response = bob_client.post(
        "/api/v1/schedules/",
        {"name": "nightly", "crontab": "0 2 * * *", "template": {**JOB, "host_tags": ["nvme"]}},
        format="json",
    )
    assert response.status_code == 201, response.content
    job = schedule_fire(schedule_id=response.json()["id"])
    assert job is not None and job.host_tags == ["nvme"]


def test_the_form_queues_required_tags_and_names_a_bad_one(client, bob, agent):
    agent.client.post("/api/v1/jobs/claim/", {"tags": ["nvme"]}, format="json")
    client.force_login(bob)
    form = {
        "versions": "14",
        "builtin": "select-only",
        "query_mode": "simple",
        "scale": "1",
        "clients": "1",
        "duration_s": "2",
        "order": "interleaved",
        "priority": "0",
    }
    page = client.get("/jobs/new/").content.decode()
    assert "Offered: bench-01: nvme" in page
    refused = client.post("/jobs/new/", {**form, "host_tags": "nvme NVMe"})
    assert refused.status_code == 200 and Job.objects.count() == 0
    (message,) = refused.context["form"].errors["host_tags"]
    assert message.startswith("'NVMe': use 1 to 64 lower-case letters"), message
    client.post("/jobs/new/", {**form, "host_tags": "nvme, 56-core"})
    assert Job.objects.get().host_tags == ["nvme", "56-core"]


def test_the_host_page_shows_the_tags_its_agent_offers(client, agent):
    agent.client.post("/api/v1/jobs/claim/", {"tags": ["nvme", "56-core"]}, format="json")
    html = client.get("/hosts/bench-01/").content.decode()
    assert "<code>56-core</code>, <code>nvme</code>" in html.split('id="tags"')[1]
    agent.client.post("/api/v1/jobs/claim/", {"tags": []}, format="json")
    assert 'id="tags"' not in client.get("/hosts/bench-01/").content.decode()


def test_the_command_queues_required_tags_under_the_api_rules(db):
    flags = ["--versions", "14", "--clients", "1", "--duration", "2"]
    with pytest.raises(CommandError, match="host_tags"):
        call_command("job_create", *flags, "--host-tags", "nvme", "NVMe", stdout=StringIO())
    assert Job.objects.count() == 0
    out = StringIO()
    call_command("job_create", *flags, "--host-tags", "nvme", stdout=out)
    assert Job.objects.get(pk=int(out.getvalue())).host_tags == ["nvme"]
