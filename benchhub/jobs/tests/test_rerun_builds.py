"""A rerun measures what ran: "Queue this again" and "settle it" build each version as its run's
build was made (the commit it resolved, its patches and flags), not from the recipe as it is
now, and settle keeps the pgbench client the runs' job pinned."""

import hashlib
from urllib.parse import quote

import pytest
from rest_framework.test import APIClient

from benchhub.builds.models import Recipe
from benchhub.builds.services import PatchIn, recipe_create, recipe_patch_add
from benchhub.compare.tests.uploads import upload
from benchhub.jobs.models import Job
from benchhub.jobs.services import JobError, job_create_again
from benchhub.results.models import Run

URL = "https://git.example.org/pg.git"
COMMIT = "9f1c2d3e4b5a69788796a5b4c3d2e1f001122334"
NAME = "master+pgxact-split"
FIRST = b"--- a/src/x.c\n+++ b/src/x.c\n@@ -1 +1 @@\n-a\n+b\n"
LATER = b"--- a/src/y.c\n+++ b/src/y.c\n@@ -1 +1 @@\n-c\n+d\n"
FIRST_SHA = hashlib.sha256(FIRST).hexdigest()

# What the runs' build was: the recipe's branch as it resolved then, its one patch, its flags.
RAN = {
    "name": NAME,
    "source": {"kind": "git", "url": URL, "ref": COMMIT},
    "patches": [{"name": "pgxact-split.patch", "sha256": FIRST_SHA, "text": FIRST.decode()}],
    "configure_flags": ["--enable-debug"],
    "cflags": "-O2",
    "contrib": ["pg_stat_statements"],
}


def _provenance() -> dict:
    return {
        "name": NAME,
        "key": "a" * 24,
        "version": "18devel",
        "source": {
            "kind": "git",
            "repository": URL,
            "ref": "master",
            "commit": COMMIT,
            "commit_date": "2026-11-01T10:00:00+00:00",
        },
        "patches": [{"name": "pgxact-split.patch", "sha256": FIRST_SHA}],
        "configure_flags": ["--enable-debug"],
        "cflags": "-O2",
        # The provenance lists contrib merged with the major's defaults; the spec sent did not.
        "contrib": ["amcheck", "pg_stat_statements"],
        "major_defaults": {"major": "18", "configure_flags": [], "copt": [], "verified": True},
        "compiler": {"cc": "gcc", "version": "gcc 12.2.0"},
    }


@pytest.fixture
def recipe(alice) -> Recipe:
    return recipe_create(
        name=NAME,
        source={"kind": "git", "url": URL, "ref": "master"},
        configure_flags=["--enable-debug"],
        cflags="-O2",
        contrib=["pg_stat_statements"],
        patches=[PatchIn(name="pgxact-split.patch", content=FIRST)],
        created_by=alice,
    )


@pytest.fixture
def bob_api(bob) -> APIClient:
    client = APIClient()
    client.force_login(bob)
    return client


def _runs_of_a_job(agent, bob_api, *, tps: dict[str, list[float]]) -> tuple[Job, Run, Run]:
    """A job of 15.4 against the recipe with a pinned pgbench client, run by the agent."""
    body = {
        "versions": ["15.4", NAME],
        "workload": {"name": "select-only", "builtin": "select-only", "query_mode": "prepared"},
        "scale": 1,
        "clients": [1],
        "duration_s": 2,
        "repeats": 2,
        "client": "15.4",
        "host": agent.host_name,
    }
    queued = bob_api.post("/api/v1/jobs/", body, format="json")
    assert queued.status_code == 201, queued.content
    claim = agent.client.post("/api/v1/jobs/claim/").json()
    assert claim["builds"][NAME]["source"] == {"kind": "git", "url": URL, "ref": "master"}
    job = {"id": claim["id"], "attempt": claim["attempt"]}
    base = upload(agent, version="15.4", tps={1: tps["base"]}, job=job)
    built = {
        "version": NAME,
        "origin": "source",
        "commit": COMMIT,
        "configure_flags": "--enable-debug",
        "provenance": _provenance(),
    }
    patched = upload(
        agent, version=NAME, tps={1: tps["patched"]}, job=job, build=built, server_version="18"
    )
    return Job.objects.get(pk=claim["id"]), base, patched


def _recipe_moves_on(recipe: Recipe) -> None:
    """The recipe gains a patch (and its branch, master, has moved on at the remote)."""
    recipe_patch_add(recipe=recipe, patch=PatchIn(name="later.patch", content=LATER))


def test_it_queues_again_the_build_that_ran_not_the_recipe_as_it_is_now(
    agent, bob_api, client, bob, recipe
):
    first, _, patched = _runs_of_a_job(agent, bob_api, tps={"base": [100], "patched": [101]})
    _recipe_moves_on(recipe)
    client.force_login(bob)

    response = client.post(f"/runs/{patched.uuid}/requeue/")

    again = Job.objects.exclude(pk=first.pk).get()
    assert response["Location"] == f"/jobs/{again.pk}/"
    assert again.builds == {NAME: RAN}
    assert (again.versions, again.client) == (["15.4", NAME], "15.4")
    # what the agent is sent when it claims the rerun
    finished = agent.client.post(
        f"/api/v1/jobs/{first.pk}/finish/", {"outcome": "failed", "stage": "x"}, format="json"
    )
    assert finished.status_code == 200, finished.content
    claim = agent.client.post("/api/v1/jobs/claim/").json()
    assert claim["id"] == again.pk and claim["builds"] == {NAME: RAN}


def test_it_settles_with_the_builds_that_ran_and_the_client_the_runs_had(agent, bob_api, recipe):
    first, _, _ = _runs_of_a_job(agent, bob_api, tps={"base": [100, 103], "patched": [104, 115]})
    _recipe_moves_on(recipe)

    response = bob_api.post(
        f"/api/v1/compare/settle/?workload=select-only&host=bench-01&versions=15.4,{quote(NAME)}"
    )

    assert response.status_code == 201, response.content
    settled = list(Job.objects.exclude(pk=first.pk).order_by("id"))
    assert settled and response.json()["jobs"] == [job.pk for job in settled]
    for job in settled:
        assert job.builds == {NAME: RAN}
        assert job.client == "15.4"
        assert job.versions == ["15.4", NAME]


def test_it_reruns_a_run_without_its_job_from_the_provenance_and_the_stored_patch(
    agent, bob_api, bob, recipe
):
    first, _, patched = _runs_of_a_job(agent, bob_api, tps={"base": [100], "patched": [101]})
    _recipe_moves_on(recipe)
    first.delete()  # the job is gone: the build's provenance is all that is left
    patched.refresh_from_db()

    again = job_create_again(run=patched, created_by=bob)

    # contrib as the provenance lists it (the spec sent is gone); the patch text from the recipe
    assert again.builds == {NAME: {**RAN, "contrib": ["amcheck", "pg_stat_statements"]}}
    assert again.versions == [NAME]


def test_it_refuses_a_rerun_whose_patch_text_is_gone(agent, bob_api, bob, recipe):
    first, _, patched = _runs_of_a_job(agent, bob_api, tps={"base": [100], "patched": [101]})
    first.delete()
    recipe.patches.all().delete()
    patched.refresh_from_db()

    with pytest.raises(JobError) as refused:
        job_create_again(run=patched, created_by=bob)

    assert refused.value.code == "invalid"
    assert f"pgxact-split.patch (sha256 {FIRST_SHA}), whose text is no longer stored" in (
        refused.value.detail
    )
    assert Job.objects.count() == 0
