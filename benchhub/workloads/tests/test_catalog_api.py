"""The catalog API, and jobs queued by catalog id with the entry's defaults applied."""

import pytest
from rest_framework.test import APIClient

from benchhub.jobs.models import Job
from benchhub.workloads.catalog import entry_list


@pytest.fixture
def bob_client(bob):
    client = APIClient()
    client.force_login(bob)
    return client


def test_it_lists_every_entry_with_params_and_both_sizes(anon_client, db):
    entries = anon_client.get("/api/v1/workloads/catalog/").json()
    assert [e["id"] for e in entries] == [entry.id for entry in entry_list()]
    lookup = next(e for e in entries if e["id"] == "e1-pk-lookup")
    assert lookup["experiment"] == "E1" and lookup["presentation"] == "sweep"
    assert lookup["params"][0] | {"help": ""} == {
        "name": "rows",
        "type": "int",
        "default": 100000,
        "published": 100000000,
        "help": "",
        "minimum": 1,
        "maximum": 10**10,
        "choices": [],
        "max_length": 200,
    }
    assert lookup["job_defaults"]["clients"] == [1, 2, 4, 8]
    assert lookup["published_job"]["clients"][-1] == 256
    assert next(e for e in entries if e["id"] == "select-only")["published_job"] is None


def test_it_shows_one_entry_with_its_default_definition(anon_client, db):
    entry = anon_client.get("/api/v1/workloads/catalog/e2-idle-connections/").json()
    assert entry["workload"]["combine"] == "measured"
    assert [s["name"] for s in entry["workload"]["streams"]] == ["idle", "select-only"]
    missing = anon_client.get("/api/v1/workloads/catalog/e9-nothing/")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"


def test_it_queues_a_catalog_job_with_the_entry_defaults(bob_client):
    response = bob_client.post(
        "/api/v1/jobs/",
        {"versions": ["13", "14"], "workload": {"catalog": "e5-tpcb-like"}},
        format="json",
    )
    assert response.status_code == 201, response.content
    job = Job.objects.get()
    assert job.workload["catalog_entry"] == "e5-tpcb-like"
    assert job.workload["params"] == {"scale": 10} and job.scale == 10
    assert (job.threads_policy, job.level_threads["8"], job.duration_s) == ("pairs", 4, 10)
    assert job.clients == [2, 4, 8, 16] and job.config_overrides == {"synchronous_commit": "off"}


def test_it_lets_the_request_override_defaults_and_params(bob_client):
    response = bob_client.post(
        "/api/v1/jobs/",
        {
            "versions": ["17"],
            "workload": {"catalog": "e1-batch-insert", "params": {"batch": 50}},
            "clients": [3],
            "duration_s": 4,
            "repeats": 2,
            "config_overrides": {},
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    job = Job.objects.get()
    assert (job.clients, job.duration_s, job.repeats, job.config_overrides) == ([3], 4, 2, {})
    assert job.workload["streams"][0]["rows_per_transaction"] == 50
    assert "generate_series(1, 50)" in job.workload["streams"][0]["scripts"][0]["body"]


@pytest.mark.parametrize(
    ("workload", "field"),
    [
        ({"catalog": "e9-nothing"}, "workload.catalog"),
        ({"catalog": "e1-pk-lookup", "params": {"rows": -1}}, "workload.params.rows"),
        ({"catalog": "e1-pk-lookup", "params": {"size": 1}}, "workload.params.size"),
        ({"catalog": "e3-key-insert", "params": {"key_type": 8}}, "workload.params.key_type"),
    ],
)
def test_it_names_the_bad_catalog_field(bob_client, workload, field):
    response = bob_client.post(
        "/api/v1/jobs/", {"versions": ["13"], "workload": workload}, format="json"
    )
    assert response.status_code == 400
    assert list(response.json()["fields"]) == [field]
    assert Job.objects.count() == 0


def test_it_accepts_a_schedule_template_that_names_a_catalog_entry(bob_client):
    response = bob_client.post(
        "/api/v1/schedules/",
        {
            "name": "nightly-e1",
            "crontab": "0 2 * * *",
            "template": {"versions": ["17"], "workload": {"catalog": "e1-insert"}},
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    bad = bob_client.post(
        "/api/v1/schedules/",
        {
            "name": "nightly-bad",
            "crontab": "0 2 * * *",
            "template": {"versions": ["17"], "workload": {"catalog": "nope"}},
        },
        format="json",
    )
    assert list(bad.json()["fields"]) == ["template.workload.catalog"]
