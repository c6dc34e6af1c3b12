"""A real agent (`benchhub-runner once`) takes a bisection's listing job from a real server: it
lists the range from its mirror of a local git repository, posts it, and finishes the job; the
server stores the commits and queues the ends. A ref that does not resolve fails the bisection
at `resolve`."""

import shutil
import subprocess
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from benchhub.bisections.models import Bisection
from benchhub.bisections.services import bisection_advance, step_version
from benchhub.builds.services import recipe_create
from benchhub.hosts.services import runner_token_create
from benchhub.jobs.models import Job
from benchhub.testing import processes

REQUEST = {
    "recipe": "master",
    "good": "base",
    "bad": "master",
    "host": "e2e-host",
    "workload": {"name": "select-only", "builtin": "select-only", "query_mode": "prepared"},
    "scale": 1,
    "clients": 1,
    "duration_s": 2.0,
}


def git(repo: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "alice",
        "GIT_AUTHOR_EMAIL": "alice@example.org",
        "GIT_COMMITTER_NAME": "alice",
        "GIT_COMMITTER_EMAIL": "alice@example.org",
        "GIT_AUTHOR_DATE": "2026-11-01T10:00:00Z",
        "GIT_COMMITTER_DATE": "2026-11-01T10:00:00Z",
        "PATH": "/usr/bin:/bin",
        "HOME": str(repo),
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.fixture
def repo():
    root = processes.agent_work_dir()
    repo = root / "postgresql"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "master")
    shas = []
    for i in range(4):
        (repo / f"file{i}.c").write_text(f"{i}\n")
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", f"commit {i}")
        shas.append(git(repo, "rev-parse", "HEAD"))
        if i == 0:
            git(repo, "tag", "base")
    yield repo, shas
    shutil.rmtree(root, ignore_errors=True)


def listing_env(*, server: str, token: str, work_dir: Path, repo: Path) -> dict[str, str]:
    """The agent's environment, its configuration listing the repository's directory (a local
    repository elsewhere is refused)."""
    config = work_dir / "agent.toml"
    config.write_text(f'[build]\nsource_dirs = ["{repo.parent}"]\n')
    return {
        **processes.agent_env(server=server, token=token, work_dir=work_dir),
        "BENCHHUB_CACHE_DIR": str(work_dir / "cache"),
        "BENCHHUB_CONFIG": str(config),
    }


def bisection_queued(alice, path: Path, request: dict = REQUEST) -> str:
    """The git recipe of ``path``, a bisection of it requested by alice through the API, and a
    runner token for e2e-host (returned)."""
    recipe_create(name="master", source={"kind": "git", "url": str(path), "ref": "master"})
    _, token = runner_token_create(host_name="e2e-host")
    api = APIClient()
    api.force_login(alice)
    created = api.post("/api/v1/bisections/", request, format="json")
    assert created.status_code == 201, created.content
    return token


def test_it_lists_the_range_through_a_real_agent(server, work_dir, alice, repo):
    path, shas = repo
    token = bisection_queued(alice, path)
    env = listing_env(server=server.url, token=token, work_dir=work_dir, repo=path)
    agent = processes.agent_once(env=env)
    output, _ = agent.communicate(timeout=300)
    assert agent.returncode == 0, output
    bisection = Bisection.objects.get()
    listing = bisection.jobs.get(bisect_range__good="base")
    assert listing.state == "done", (listing.failure_stage, listing.failure_message, output)
    assert (bisection.state, bisection.good_sha, bisection.bad_sha) == ("running", shas[0], shas[3])
    commits = list(bisection.commits.values_list("sha", "subject", "files"))
    assert commits == [
        (shas[3], "commit 3", ["file3.c"]),
        (shas[2], "commit 2", ["file2.c"]),
        (shas[1], "commit 1", ["file1.c"]),
    ]
    ends = bisection.jobs.get(state="queued")
    assert ends.versions == [
        step_version(recipe_name="master", sha=shas[0]),
        step_version(recipe_name="master", sha=shas[3]),
    ]


def test_a_ref_that_does_not_resolve_fails_the_bisection(server, work_dir, alice, repo):
    path, _ = repo
    token = bisection_queued(alice, path, {**REQUEST, "good": "no-such-tag"})
    env = listing_env(server=server.url, token=token, work_dir=work_dir, repo=path)
    agent = processes.agent_once(env=env)
    output, _ = agent.communicate(timeout=300)
    listing = Job.objects.get()
    assert (listing.state, listing.failure_stage) == ("failed", "resolve"), output
    assert "no-such-tag" in listing.failure_message
    # The worker advances it on its own; advancing again here changes nothing.
    bisection = bisection_advance(bisection_id=Bisection.objects.get().pk)
    assert bisection is not None and bisection.state == "failed"
    assert "resolve" in bisection.message


def test_a_repository_outside_the_listed_directories_fails_the_listing(
    server, work_dir, alice, repo
):
    """The recipe names a repository of the host the agent's configuration does not list: the
    agent, as root, refuses it before git reads it, and the bisection fails at `resolve`."""
    path, _ = repo
    token = bisection_queued(alice, path)
    elsewhere = work_dir / "sources" / "x"
    elsewhere.mkdir(parents=True)
    env = listing_env(server=server.url, token=token, work_dir=work_dir, repo=elsewhere)
    agent = processes.agent_once(env=env)
    output, _ = agent.communicate(timeout=300)
    listing = Job.objects.get()
    assert (listing.state, listing.failure_stage) == ("failed", "resolve"), output
    assert f"source.url {path} is not under a directory this agent takes sources from" in (
        listing.failure_message
    )
    assert not list((work_dir / "cache" / "builds" / "sources" / "git").glob("*.git"))
