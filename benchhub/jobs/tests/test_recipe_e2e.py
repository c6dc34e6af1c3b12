"""End to end, from source: two recipes (PostgreSQL 15.18 from its source tarball, plain and with
a patch that makes every commit 2 ms slower) queued in one job through the API, claimed by a real
agent (`benchhub-runner once`), built, measured with pgbench, and shown with their provenance.

The agent builds in the session's one build cache (benchhub.testing.builds), as an agent on a
benchmark host keeps one: the session's 15.18 builds, made by ``pg15_release_builds`` from a
release name, are the installs the agent finds for these recipes by their inputs, so nothing is
compiled here. Compiling in a job is what the bisection's end-to-end test does, commit by commit,
and the `benchhub` command's patch trial from a git repository (test_try_e2e).
"""

import hashlib
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from benchhub.builds.models import Build
from benchhub.hosts.services import runner_token_create
from benchhub.jobs.models import Job
from benchhub.results.models import Run
from benchhub.testing import builds, installs, pgsource, processes

JOB = {
    "versions": ["15.18", "15.18+slow-commit"],
    "workload": {"name": "select-only", "builtin": "select-only", "query_mode": "prepared"},
    "scale": 1,
    "clients": [1, 2],
    "duration_s": 3.0,
    "repeats": 3,
    "warmup_s": 1.0,
    # Named as before 13: PostgreSQL 15 takes it as wal_keep_size, and the run says so.
    "config_overrides": {"wal_keep_segments": "4"},
}
COMPARE = "/compare/?workload=select-only&host=e2e-host&versions=15.18,15.18%2Bslow-commit"
BENCHHUB = str(Path(sys.executable).parent / "benchhub")


@pytest.fixture
def build_env(work_dir):
    """The agent's configuration for building: the session's build cache and the kept ccache."""
    return builds.agent_build_env(work_dir)


def run_agent(env: dict[str, str]) -> str:
    agent = processes.agent_once(env=env)
    output, _ = agent.communicate(timeout=1500)
    assert agent.returncode == 0, output
    return output


@pytest.mark.slow
def test_it_builds_two_recipes_runs_them_and_shows_their_provenance(
    server, work_dir, build_env, alice, pg15_release_builds
):
    """What only this test proves: recipes sent through the API reach a real agent as specs
    whose installs it finds by their inputs, are measured in one job, and their provenance and
    verdicts (the patched one slower at every level) show on the run and compare pages."""
    started = time.monotonic()
    tarball = installs.pg15_source_tarball()
    patch = pgsource.slow_commit_patch(tarball)
    api = APIClient()
    api.force_login(alice)
    source = {"kind": "tarball", "path": str(tarball), "sha256": installs.PG15_SHA256}
    plain = {"name": "15.18", "source": source, "contrib": ["pg_stat_statements"]}
    slow = {
        **plain,
        "name": "15.18+slow-commit",
        "base": "15.18",
        "patches": [{"name": "slow-commit.patch", "text": patch}],
    }
    for recipe in (plain, slow):
        response = api.post("/api/v1/recipes/", recipe, format="json")
        assert response.status_code == 201, response.content
    queued = api.post("/api/v1/jobs/", JOB, format="json")
    assert queued.status_code == 201, queued.content
    job = Job.objects.get(pk=queued.json()["id"])
    _, token = runner_token_create(host_name="e2e-host")
    env = {
        **processes.agent_env(server=server.url, token=token, work_dir=work_dir),
        **build_env,
    }

    output = run_agent(env)

    job.refresh_from_db()
    assert job.state == "done", (job.failure_stage, job.failure_message, output)
    # The server's specs of both recipes are the inputs the session built from a release name.
    assert "15.18: reusing /" in output and "15.18+slow-commit: reusing /" in output, output
    runs = {r.build.version: r for r in Run.objects.filter(job=job).select_related("build")}
    assert set(runs) == {"15.18", "15.18+slow-commit"}
    fast, slowed = runs["15.18"], runs["15.18+slow-commit"]
    assert fast.build.provenance["key"] == pg15_release_builds.plain.provenance["key"]
    assert slowed.build.provenance["key"] == pg15_release_builds.patched.provenance["key"]
    for run in (fast, slowed):
        assert run.build.origin == "source" and run.server_version.startswith("15.18")
        prov = run.build.provenance
        assert prov["source"]["tarball_sha256"] == installs.PG15_SHA256
        assert prov["compiler"]["version"].startswith("gcc") and prov["build_seconds"] > 0
    digest = hashlib.sha256(patch.encode()).hexdigest()
    assert slowed.build.provenance["patches"] == [{"name": "slow-commit.patch", "sha256": digest}]
    assert fast.build.provenance["patches"] == []
    assert fast.build.input_key != slowed.build.input_key
    # The patched build sorts right after its base, and is slower at every level.
    assert list(Build.objects.order_by("sort_key").values_list("version", flat=True)) == [
        "15.18",
        "15.18+slow-commit",
    ]
    tps = {
        name: {r.clients: r.tps for r in run.results.all() if not r.aborted}
        for name, run in runs.items()
    }
    assert set(tps["15.18"]) == set(tps["15.18+slow-commit"]) == {1, 2}
    for clients in (1, 2):
        assert tps["15.18+slow-commit"][clients] < tps["15.18"][clients], tps
    # 2 ms per commit caps one client near 500 tps.
    assert tps["15.18+slow-commit"][1] < 600, tps
    page = Client().get(f"/runs/{slowed.uuid}/").content.decode()
    assert 'id="build-provenance"' in page
    assert f"slow-commit.patch (sha256 {digest})" in page
    assert installs.PG15_SHA256 in page and "pg_stat_statements" in page
    # The job's setting as 15 takes it, and one pgbench (the newest: the agent's 18) for both.
    assert fast.settings["wal_keep_size"] == "64MB" and "wal_keep_segments" not in fast.settings
    assert fast.settings_translated["wal_keep_segments"].startswith("wal_keep_size = 64MB")
    assert "wal_keep_size = 64MB" in page
    assert fast.pgbench_version == slowed.pgbench_version
    assert int(fast.pgbench_version.split(".")[0]) >= 18
    # The compare page: slower at every level by the verdicts, the patch named in the banner.
    compare = Client().get(COMPARE).content.decode()
    verdicts = re.findall(
        r'<tr data-label="15\.18\+slow-commit" data-clients="(\d+)" data-verdict="(\w+)"', compare
    )
    assert sorted(verdicts) == [("1", "slower"), ("2", "slower")], compare
    differences = compare[compare.index("These runs differ") :]
    assert "slow-commit.patch" in differences[:5000]
    print(f"the job on two reused builds: {time.monotonic() - started:.0f} s")

    # A second job for the same recipes reuses both installs again. It pins
    # the pgbench client to the plain build's own, which drives both servers.
    second_job = {**JOB, "clients": [1], "duration_s": 2.0, "repeats": 1, "client": "15.18"}
    again = api.post("/api/v1/jobs/", second_job, format="json")
    assert again.status_code == 201, again.content
    output = run_agent(env)
    second = Job.objects.get(pk=again.json()["id"])
    assert second.state == "done", (second.failure_stage, second.failure_message, output)
    assert "15.18: reusing /" in output and "15.18+slow-commit: reusing /" in output, output
    assert ": built /" not in output, output
    reran = Run.objects.filter(job=second).select_related("build")
    assert {r.build_id for r in reran} == {fast.build_id, slowed.build_id}
    assert {r.pgbench_version for r in reran} == {"15.18"}
    assert Build.objects.count() == 2
    print(f"with the second job: {time.monotonic() - started:.0f} s")


@pytest.mark.slow
def test_a_build_that_fails_ends_the_job_at_build_with_the_log_tail_on_its_page(
    server, work_dir, build_env, alice
):
    """A patch that does not apply, then a configure flag configure refuses: each job ends at
    the build stage, and its page shows the build's own stage and the end of its log."""
    tarball = installs.pg15_source_tarball()
    api = APIClient()
    api.force_login(alice)
    source = {"kind": "tarball", "path": str(tarball), "sha256": installs.PG15_SHA256}
    stale = pgsource.stale_patch(tarball)
    recipes: dict[str, dict[str, Any]] = {
        "15.18+stale": {"patches": [{"name": "stale.patch", "text": stale}]},
        "15.18+bad-blocksize": {"configure_flags": ["--with-blocksize=3"]},
    }
    _, token = runner_token_create(host_name="e2e-host")
    env = {**processes.agent_env(server=server.url, token=token, work_dir=work_dir), **build_env}
    expected = {
        "15.18+stale": ("build failed at patch: stale.patch does not apply", "FAILED"),
        "15.18+bad-blocksize": ("build failed at configure", "Invalid block size"),
    }
    for name, fields in recipes.items():
        recipe = {"name": name, "source": source, "base": "15.18", **fields}
        assert api.post("/api/v1/recipes/", recipe, format="json").status_code == 201
        queued = api.post("/api/v1/jobs/", {**JOB, "versions": [name]}, format="json")
        assert queued.status_code == 201, queued.content
        agent = processes.agent_once(env=env)
        output, _ = agent.communicate(timeout=900)

        job = Job.objects.get(pk=queued.json()["id"])
        assert (job.state, job.failure_stage) == ("failed", "build"), output
        head, tail = expected[name]
        assert f"{name}: {head}" in job.failure_message and tail in job.failure_message
        page = Client().get(f"/jobs/{job.pk}/").content.decode()
        assert "at build" in page and tail in page
        assert "last lines of the build log" in page
        assert not Run.objects.filter(job=job).exists()
