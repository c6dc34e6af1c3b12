"""The claim response is what the agent parses: jobs queued through the API reach the agent's
typed job (benchhub_runner.jobspec.spec) whole, whatever fields they use."""

import hashlib

import pytest
from benchhub_runner.build.spec import GitSource, TarballSource
from benchhub_runner.jobspec.spec import job_parse
from rest_framework.test import APIClient

from benchhub.builds.models import Recipe
from benchhub.builds.services import PatchIn, recipe_create, recipe_patch_add
from benchhub.workloads.catalog import entry_list

SHA = "11df0df97fe3ea4ba9a791faaf39cee1d2fe571e78885b5b55d8517d27c323b4"
PATCH = "--- a/README\n+++ b/README\n@@ -1 +1 @@\n-PostgreSQL\n+PostgreSQL, patched\n"

JOB = {
    "versions": ["9.6", "15.18+slow-commit", "master+pgxact-split"],
    "workload": {
        "name": "e2-like",
        "setup": ["CREATE TABLE IF NOT EXISTS t (id int)"],
        "level_setup": ["TRUNCATE t"],
        "query_mode": "prepared",
        "streams": [
            {
                "name": "idle",
                "role": "background",
                "clients": 50,
                "threads": 2,
                "scripts": [{"name": "idle", "weight": 1, "body": "SELECT pg_sleep(2000);"}],
            },
            {"name": "select-only", "builtin": "select-only"},
        ],
        "combine": "measured",
        "progress_s": 5,
    },
    "scale": 10,
    "clients": [52, 208],
    "threads_policy": "pairs",
    "level_threads": {"52": 52, "208": 104},
    "duration_s": 30,
    "repeats": 3,
    "config_overrides": {"max_connections": "1000", "shared_buffers": "1GB"},
    "order": "sequential",
}


@pytest.fixture
def bob_client(bob):
    client = APIClient()
    client.force_login(bob)
    return client


@pytest.fixture
def recipes(alice):
    """The two builds JOB names: a tarball with a patch, and a git branch with flags."""
    slow = recipe_create(
        name="15.18+slow-commit",
        base="15.18",
        source={"kind": "tarball", "path": "/srv/postgresql-15.18.tar.bz2", "sha256": SHA},
        contrib=["pg_stat_statements"],
        patches=[PatchIn(name="slow-commit.patch", content=PATCH.encode())],
        created_by=alice,
    )
    split = recipe_create(
        name="master+pgxact-split",
        source={"kind": "git", "url": "https://git.example.org/postgresql.git", "ref": "master"},
        configure_flags=["--enable-debug"],
        cflags="-O2",
        created_by=alice,
    )
    return slow, split


def queue_and_claim(bob_client, agent, job):
    response = bob_client.post("/api/v1/jobs/", job, format="json")
    assert response.status_code == 201, response.content
    claimed = agent.client.post("/api/v1/jobs/claim/")
    assert claimed.status_code == 200
    return claimed.json()


def test_it_hands_the_agent_every_field_it_runs_on(bob_client, agent, recipes):
    job = job_parse(queue_and_claim(bob_client, agent, JOB))

    assert job.versions == ("9.6", "15.18+slow-commit", "master+pgxact-split")
    assert (job.attempt, job.claimed_host, job.order) == (1, "bench-01", "sequential")
    assert (job.clients, job.repeats, job.scale, job.duration_s) == ((52, 208), 3, 10, 30.0)
    assert (job.threads_for(52), job.threads_for(208)) == (52, 104)
    assert job.config_overrides == JOB["config_overrides"]
    idle, measured = job.workload.streams
    assert (idle.role, idle.clients, idle.scripts[0].body) == (
        "background",
        50,
        "SELECT pg_sleep(2000);",
    )
    assert (measured.role, measured.builtin, measured.clients) == ("measured", "select-only", None)
    assert (job.workload.combine, job.workload.progress_s) == ("measured", 5)
    assert set(job.builds) == {"15.18+slow-commit", "master+pgxact-split"}


def test_it_sends_each_recipe_version_its_build_spec_as_queued(bob_client, agent, recipes, alice):
    response = bob_client.post("/api/v1/jobs/", JOB, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["builds"]["15.18+slow-commit"]["patches"] == [
        {"name": "slow-commit.patch", "sha256": hashlib.sha256(PATCH.encode()).hexdigest()}
    ]
    # A patch added after the job was queued is not the job's: it builds what was asked.
    recipe_patch_add(
        recipe=recipes[0],
        patch=PatchIn(name="later.patch", content=PATCH.encode()),
        uploaded_by=alice,
    )

    job = job_parse(agent.client.post("/api/v1/jobs/claim/").json())

    slow, split = job.builds["15.18+slow-commit"], job.builds["master+pgxact-split"]
    assert slow.source == TarballSource(sha256=SHA, path="/srv/postgresql-15.18.tar.bz2")
    assert [(p.name, p.text) for p in slow.patches] == [("slow-commit.patch", PATCH)]
    assert slow.contrib == ("pg_stat_statements",) and slow.configure_flags == ()
    assert split.source == GitSource(url="https://git.example.org/postgresql.git", ref="master")
    assert (split.configure_flags, split.cflags) == (("--enable-debug",), "-O2")
    assert "9.6" not in job.builds


@pytest.mark.parametrize(
    "version", ["master", "master@1a2b3c4", "15.18+other", "14devel-2021-05-01"]
)
def test_it_refuses_a_build_no_recipe_defines(bob_client, recipes, version):
    response = bob_client.post("/api/v1/jobs/", {**JOB, "versions": ["13", version]}, format="json")

    assert response.status_code == 400
    assert version in response.json()["fields"]["versions"][0]
    assert Recipe.objects.count() == 2


@pytest.mark.parametrize("entry", [entry.id for entry in entry_list()])
def test_every_catalog_workload_reaches_the_agent_whole(bob_client, agent, entry):
    job = job_parse(
        queue_and_claim(bob_client, agent, {"versions": ["13"], "workload": {"catalog": entry}})
    )

    assert job.workload.definition["catalog_entry"] == entry
    assert job.workload.name == entry
