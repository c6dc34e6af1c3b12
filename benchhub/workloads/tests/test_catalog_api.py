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


# The versions each experiment's post compared, as its users name them.
PUBLISHED_VERSIONS = {
    "E1": ["9.5.4", "9.6.0"],
    "E2": ["13.3", "14beta1"],
    "E3": ["9.2"],
    "E4": ["10"],
    "E5": ["13-snapshot-2021-05-01", "14devel-2021-05-01"],
}
# The tablespaces the posts put E3's table and index, and E4's children, in.
PUBLISHED_TABLESPACES = {
    "table_tablespace": "disk1",
    "index_tablespace": "disk2",
    "even_tablespace": "disk1",
    "odd_tablespace": "disk2",
}
PUBLISHED_JOB_FIELDS = (
    "clients",
    "threads_policy",
    "threads",
    "level_threads",
    "level_durations",
    "duration_s",
    "config_overrides",
)


# E5's two snapshots of one day, built from source with --enable-debug: recipes name them.
SNAPSHOT_BRANCHES = {"13-snapshot-2021-05-01": "REL_13_STABLE", "14devel-2021-05-01": "master"}


@pytest.mark.parametrize("entry_id", [e.id for e in entry_list() if e.published_job])
def test_every_experiment_queues_as_its_post_ran_it(
    bob_client, anon_client, alice, agent, entry_id
):
    staff = APIClient()
    staff.force_login(alice)
    for name, branch in SNAPSHOT_BRANCHES.items():
        source = {
            "kind": "git",
            "url": "https://git.postgresql.org/git/postgresql.git",
            "branch": branch,
            "date": "2021-05-01",
        }
        recipe = {"name": name, "source": source, "configure_flags": ["--enable-debug"]}
        defined = staff.post("/api/v1/recipes/", recipe, format="json")
        assert defined.status_code == 201, defined.content
    # bench-01's agent offers the two disks the posts used.
    offer = {"tablespaces": ["disk1", "disk2"]}
    claimed = agent.client.post("/api/v1/jobs/claim/", offer, format="json")
    assert claimed.status_code == 204
    entry = anon_client.get(f"/api/v1/workloads/catalog/{entry_id}/").json()
    params = {
        p["name"]: PUBLISHED_TABLESPACES.get(p["name"], p["default"])
        if p["published"] is None
        else p["published"]
        for p in entry["params"]
    }
    published = entry["published_job"]
    response = bob_client.post(
        "/api/v1/jobs/",
        {
            "versions": PUBLISHED_VERSIONS[entry["experiment"]],
            "workload": {"catalog": entry_id, "params": params},
            "host": "bench-01",
            **{name: published[name] for name in PUBLISHED_JOB_FIELDS},
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    job = Job.objects.get()
    assert job.versions == PUBLISHED_VERSIONS[entry["experiment"]]
    assert job.workload["params"] == params
    for name in PUBLISHED_JOB_FIELDS:
        assert getattr(job, name) == published[name], name
    if published["scale"] is not None:
        assert job.scale == published["scale"]
    named = [params[name] for name in PUBLISHED_TABLESPACES if name in params]
    assert job.tablespaces == named and (entry["experiment"] in ("E3", "E4")) == bool(named)
