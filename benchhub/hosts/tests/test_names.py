"""Host names are unique whatever their spelling: letter case, compatibility forms and a
trailing dot; every look-up by name reads them the same way."""

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from rest_framework.test import APIClient

from benchhub.hosts.models import Host, RunnerToken, host_name_key
from benchhub.hosts.services import HostNameTaken, host_get_or_create, runner_token_create
from benchhub.jobs.models import Job
from benchhub.jobs.selectors import job_pending_for
from benchhub.jobs.tests.test_queue import JOB
from benchhub.testing.payloads import run_payload
from benchhub.testing.processes import ROOT


def fullwidth(text: str) -> str:
    """ASCII text in its full-width compatibility forms (U+FF01..U+FF5E)."""
    return "".join(chr(ord(ch) + 0xFEE0) for ch in text)


def test_it_reads_names_that_differ_only_in_case_or_character_forms_as_one():
    assert (
        host_name_key("BENCH-A") == host_name_key("bench-a") == host_name_key(fullwidth("bench-a"))
    )
    assert host_name_key("Straße") == host_name_key("STRASSE")
    assert host_name_key("bench-a") != host_name_key("bench-b")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "spelling", ["BENCH-A", "Bench-A", fullwidth("bench-a"), fullwidth("BENCH") + "-a"]
)
def test_it_refuses_a_new_host_spelled_like_one_that_exists(spelling):
    runner_token_create(host_name="bench-a")

    with pytest.raises(HostNameTaken) as refused:
        host_get_or_create(name=spelling)

    assert refused.value.field == "host.name" and refused.value.status == 409
    assert "'bench-a'" in refused.value.detail
    assert list(Host.objects.values_list("name", flat=True)) == ["bench-a"]


@pytest.mark.django_db
def test_it_finds_a_host_under_its_own_name_and_keeps_distinct_names_apart():
    first = host_get_or_create(name="bench-a")
    assert host_get_or_create(name="bench-a") == first
    assert host_get_or_create(name="bench-b") != first


@pytest.mark.django_db
def test_the_database_holds_the_rule_whatever_writes_the_host():
    Host.objects.create(name="bench-a")
    with pytest.raises(IntegrityError), transaction.atomic():
        Host.objects.create(name="BENCH-A")
    renamed = Host.objects.create(name="bench-b")
    renamed.name = "Bench-A"
    with pytest.raises(IntegrityError), transaction.atomic():
        renamed.save(update_fields=["name"])


@pytest.mark.django_db
def test_the_token_command_refuses_a_host_spelled_like_another_saying_which():
    runner_token_create(host_name="bench-a")
    with pytest.raises(CommandError, match="Host 'bench-a' already exists"):
        call_command("runner_create", "BENCH-A")


def test_it_reads_a_trailing_dot_as_the_same_name():
    assert host_name_key("bench-01.") == host_name_key("BENCH-01") == "bench-01"
    assert host_name_key("bench-01..") == "bench-01."  # one dot only: the root label
    assert host_name_key(".") == "."


PASTED = ROOT / "runners/tests/fixtures/pasted/indented-4-prose-pg15-select-only-P1-r-T3.txt"


@pytest.mark.django_db
def test_it_refuses_an_import_under_an_agents_host_written_with_a_trailing_dot(bob):
    runner_token_create(host_name="bench-01")
    api = APIClient()
    api.force_authenticate(bob)

    body = {"host": "bench-01.", "outputs": [{"text": PASTED.read_text()}]}
    response = api.post("/api/v1/imports/outputs/", body, format="json")

    assert response.status_code == 403, response.json()
    assert response.json()["error"] == "forbidden_host"
    assert "spelled 'bench-01'" in response.json()["detail"]
    assert list(Host.objects.values_list("name", flat=True)) == ["bench-01"]


@pytest.mark.django_db
def test_the_token_command_refuses_a_trailing_dot_beside_the_host():
    runner_token_create(host_name="bench-01")
    with pytest.raises(CommandError, match="Host 'bench-01' already exists"):
        call_command("runner_create", "bench-01.")
    assert Host.objects.count() == 1


def test_it_finds_the_host_a_filter_or_a_job_names_in_another_spelling(agent, alice):
    uploaded = agent.client.post("/api/v1/runs/", run_payload(host="bench-01"), format="json")
    assert uploaded.status_code == 201, uploaded.json()
    api = APIClient()
    api.force_authenticate(alice)

    for spelling in ("bench-01", "BENCH-01.", "bench-01."):
        listed = api.get("/api/v1/runs/", {"host": spelling}).json()
        assert [r["host"] for r in listed["results"]] == ["bench-01"], spelling
    job = api.post("/api/v1/jobs/", {**JOB, "host": "bench-01."}, format="json")
    assert job.status_code == 201, job.json()
    assert Job.objects.get().host.name == "bench-01"
    assert call_command("runner_revoke", "bench-01.") is None
    assert not RunnerToken.objects.filter(revoked_at__isnull=True).exists()


@pytest.mark.parametrize("spelling", ["BENCH-01.", "bench-01", fullwidth("bench-01"), "Bench-01"])
def test_it_reads_an_agents_host_in_every_spelling_for_imports_jobs_and_the_queue(
    agent, alice, bob, spelling
):
    # One host, however it is written: an import under it is refused as the agent's, a job
    # queued for it lands on it, and a comparison finds that job coming.
    assert host_name_key(spelling) == host_name_key("bench-01")
    person = APIClient()
    person.force_authenticate(bob)
    text = (ROOT / "runners/tests/fixtures/pgbench/pg15-select-only-P1-r-T3.txt").read_text()
    body = {"host": spelling, "version": "15.4", "outputs": [{"text": text}]}
    refused = person.post("/api/v1/imports/outputs/", body, format="json")
    if spelling.isascii():
        assert refused.status_code == 403 and refused.json()["error"] == "forbidden_host"
    else:  # an upload's host name is ASCII: refused before any look-up, naming the field
        assert refused.status_code == 400 and "host.name" in refused.json()["fields"]
    staff = APIClient()
    staff.force_authenticate(alice)
    queued = staff.post("/api/v1/jobs/", {**JOB, "host": spelling}, format="json")
    assert queued.status_code == 201, queued.json()
    assert Host.objects.get().name == "bench-01"
    job = Job.objects.get()
    assert job_pending_for(workload=job.workload["name"], host=spelling, versions=job.versions) == [
        job
    ]
