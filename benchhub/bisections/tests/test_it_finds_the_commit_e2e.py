"""A bisection end to end: a local git repository made from the PostgreSQL 15.18 source
tarball with 8 commits of its own, one of which makes every transaction 2 ms slower and
one of which does not compile. A bisection from the tarball's commit to the last one, with real
builds (the suite's warm ccache; after its first build, the agent moves its kept tree from commit
to commit), a real agent and a real server (its Celery worker advances the bisection), finds the
slow commit in at most 4 measured steps, skips the broken one, and its page names the culprit.
It prints each job's time and each build's time and mode (docs/performance-log.md, "A bisection
step").
"""

import shutil
import time
from pathlib import Path

import pytest
from django.test import Client
from rest_framework.test import APIClient

from benchhub.bisections.models import Bisection
from benchhub.builds.services import recipe_create
from benchhub.hosts.services import runner_token_create
from benchhub.jobs.models import Job
from benchhub.results.models import Run
from benchhub.testing import builds, gitrepo, processes
from benchhub.testing.gitrepo import commit

XACT_C = "src/backend/access/transam/xact.c"
BROKEN_C = "src/backend/utils/adt/int8.c"
NOTES = "NOTES.benchhub"


def slow_xact(repo: Path) -> None:
    """Sleep 2 ms at the start of every CommitTransaction: every transaction gets slower."""
    path = repo / XACT_C
    text = path.read_text()
    start = text.index("\nCommitTransaction(void)\n{\n")
    line = "\tis_parallel_worker = (s->blockState == TBLOCK_PARALLEL_INPROGRESS);\n"
    at = text.index(line, start) + len(line)
    path.write_text(text[:at] + "\n\tpg_usleep(2000);\t/* a slower commit */\n" + text[at:])


@pytest.fixture
def repository():
    """base (the tarball, tagged REL_15_18), then c1 .. c8: c4 does not compile (c5 repairs
    it), c6 makes commits slow; the others change a file nothing compiles."""
    root = processes.agent_work_dir()
    repo = root / "postgresql"
    shas = {"base": gitrepo.pg15_repository(repo)}
    broken = repo / BROKEN_C
    original = broken.read_text()
    for i in range(1, 9):
        (repo / NOTES).write_text(f"{i}\n")
        if i == 4:
            broken.write_text(original + "\nthis is not C;\n")
        if i == 5:
            broken.write_text(original)
        if i == 6:
            slow_xact(repo)
        shas[f"c{i}"] = commit(repo, i, {4: "broken", 6: "slow commit"}.get(i, f"commit {i}"))
    yield repo, shas
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def build_env(work_dir, pg15_release_builds, repository):
    """The agent builds in the session's build cache with the kept ccache, and takes the test's
    repository (its host owner lists the directory). The session's release builds come first:
    they are the one build allowed to compile from a cold ccache."""
    repo, _ = repository
    return builds.agent_build_env(work_dir, source_dirs=[repo.parent])


def next_job_or_end(bisection_id: int, timeout_s: float = 120) -> bool:
    """Wait for the worker's advance: True when a job is queued, False when it has ended."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        bisection = Bisection.objects.get(pk=bisection_id)
        if bisection.state not in Bisection.OPEN:
            return False
        if bisection.jobs.filter(state=Job.State.QUEUED).exists():
            return True
        time.sleep(0.5)
    raise AssertionError(f"bisection {bisection_id} neither advanced nor ended")


@pytest.mark.slow
def test_it_finds_the_slow_commit_and_skips_the_broken_one(
    server, work_dir, build_env, alice, repository, capsys
):
    """What only this test proves: a bisection over real commits, from the API to the culprit on
    its page, with a real agent compiling each commit in its kept tree, a real server whose
    Celery worker advances it, a commit that does not compile skipped, and pgbench's verdicts
    deciding the rest."""
    started = time.monotonic()
    repo, shas = repository
    recipe_create(name="15devel", source={"kind": "git", "url": str(repo), "ref": "master"})
    _, token = runner_token_create(host_name="e2e-host")
    api = APIClient()
    api.force_login(alice)
    created = api.post(
        "/api/v1/bisections/",
        {
            "recipe": "15devel",
            "good": "REL_15_18",
            "bad": "master",
            "host": "e2e-host",
            "workload": {"name": "select-only", "builtin": "select-only"},
            "scale": 1,
            "clients": 1,
            "duration_s": 3.0,
            "warmup_s": 1.0,
            "repeats": 3,
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    bisection_id = created.json()["id"]
    env = {**processes.agent_env(server=server.url, token=token, work_dir=work_dir), **build_env}
    outputs = []
    for _ in range(12):
        agent = processes.agent_once(env=env)
        output, _ = agent.communicate(timeout=1500)
        outputs.append(output)
        # 1: the job failed (the commit that does not compile), which the bisection skips.
        assert agent.returncode in (0, 1), output
        if not next_job_or_end(bisection_id):
            break
    bisection = Bisection.objects.get(pk=bisection_id)
    assert bisection.state == "found", (bisection.message, outputs[-1][-3000:])
    assert bisection.culprit == shas["c6"]
    tried = list(bisection.commits.exclude(step=None).exclude(position=0).order_by("step"))
    assert len(tried) <= 4, [(c.subject, c.verdict) for c in tried]
    broken = bisection.commits.get(sha=shas["c4"])
    assert broken.verdict == "skipped" and "build" in broken.reason, broken.reason
    # After the first build, the agent moves its kept tree from commit to commit.
    modes = [
        run.build.provenance.get("build_mode", "")
        for run in Run.objects.filter(job__bisection=bisection).select_related("build")
    ]
    assert any(mode.startswith("incremental from ") for mode in modes), modes
    page = Client().get(f"/bisections/{bisection_id}/").content.decode()
    assert "slow commit" in page and shas["c6"] in page and XACT_C in page
    with capsys.disabled():  # in CI's log too: docs/performance-log.md, "A bisection step"
        print(
            f"\nbisection of 8 commits: {len(tried)} steps "
            f"({', '.join(f'{c.subject}: {c.verdict}' for c in tried)}), "
            f"{time.monotonic() - started:.0f} s"
        )
        for line in job_times(bisection):
            print(line)


def job_times(bisection: Bisection) -> list[str]:
    """Each job of the bisection: what it did, its time from claim to finish, and the build
    time of each commit it built (the agent's provenance)."""
    lines = []
    for job in bisection.jobs.order_by("created_at", "id"):
        wall = (job.finished_at - job.claimed_at).total_seconds()
        builds = [
            f"{run.build.version} built in {run.build.provenance.get('build_seconds')} s "
            f"({run.build.provenance.get('build_mode')})"
            for run in job.runs.select_related("build").order_by("id")
        ]
        what = "listing" if job.bisect_range else ", ".join(job.versions)
        lines.append(f"job {job.pk} ({what}, {job.state}): {wall:.0f} s; {'; '.join(builds)}")
    return lines
