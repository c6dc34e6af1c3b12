"""A bisection's world for the server tests: a git recipe, a linear range of commits, and an
agent that plays the jobs through the API with chosen tps per commit (no pgbench)."""

import copy
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from benchhub.bisections.models import Bisection
from benchhub.bisections.services import bisection_advance
from benchhub.builds.services import recipe_create
from benchhub.jobs.tests.conftest import server, work_dir  # noqa: F401 - the real-agent fixtures
from benchhub.regressions.models import Regression
from benchhub.results.models import Run
from benchhub.results.services import run_aggregate
from benchhub.testing.payloads import result, run_payload

URL = "https://git.example.org/postgresql.git"


def sha(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:40]


@pytest.fixture
def recipe(alice):
    return recipe_create(
        name="master", source={"kind": "git", "url": URL, "ref": "master"}, created_by=alice
    )


def git_run(
    agent: Any, commit: str, tps: Mapping[int, float] | None = None, *, repository: str = URL
) -> Run:
    """An aggregated run of `master@<commit12>`, built from `commit` of `repository` (its
    provenance says so), measuring `tps` (level -> tps, three repeats each; default 1 and 2
    clients at 1000 tps per client)."""
    version = f"master@{commit[:12]}"
    provenance = {
        "name": version,
        "key": commit[:24],
        "version": "18devel",
        "source": {"kind": "git", "repository": repository, "ref": commit, "commit": commit},
    }
    build = {"version": version, "origin": "source", "commit": commit, "provenance": provenance}
    levels = dict(tps or {1: 1000.0, 2: 2000.0})
    results = [
        result(level, r, value * (1 + 0.002 * (r - 2)), samples=0)
        for level, value in levels.items()
        for r in (1, 2, 3)
    ]
    payload = run_payload(
        version=version,
        build=copy.deepcopy(build),
        server_version="18devel",
        clients=tuple(levels),
        repeats=3,
        results=results,
    )
    response = agent.client.post("/api/v1/runs/", payload, format="json")
    assert response.status_code == 201, response.content
    run = Run.objects.get(uuid=payload["run_uuid"])
    run_aggregate(run_id=run.pk)
    return run


def regression_between(
    before: Run, after: Run, *, clients: int, before_tps: float, after_tps: float
) -> Regression:
    """A detected change between two runs at `clients`, as detection stores one (figures given
    here: the bisection reads its runs, level and change)."""
    change = after_tps / before_tps - 1
    return Regression.objects.create(
        kind=Regression.Kind.REGRESSION if change < 0 else Regression.Kind.IMPROVEMENT,
        comparability_key="k" * 64,
        clients=clients,
        host=before.host,
        workload=before.workload,
        run_before=before,
        run_after=after,
        before_tps=before_tps,
        after_tps=after_tps,
        before_runs=1,
        after_runs=1,
        change=change,
        p_value=0.001,
    )


def linear_range(count: int) -> tuple[str, list[dict[str, Any]]]:
    """The good end and `count` commits after it, newest first (c{count-1} .. c0)."""
    good = sha("good")
    commits = []
    for i in range(count):
        parent = sha(f"c{i - 1}") if i else good
        commits.append(
            {
                "sha": sha(f"c{i}"),
                "parents": [parent],
                "author": "alice <alice@example.org>",
                "date": f"2026-11-0{1 + i % 9}T10:00:00Z",
                "subject": f"commit {i}",
                "files": [f"src/file{i}.c"],
                "files_total": 1,
            }
        )
    return good, commits[::-1]


REQUEST = {
    "recipe": "master",
    "good": "REL_15_0",
    "bad": "master",
    "host": "bench-01",
    "workload": {"name": "select-only", "builtin": "select-only", "query_mode": "prepared"},
    "scale": 1,
    "clients": 8,
    "duration_s": 10.0,
    "repeats": 3,
}


@dataclass
class Play:
    """Plays the agent of bench-01 through the API: `tps(sha)` is what a commit measures;
    `failing` are commits whose job fails at build."""

    agent: Any
    tps: Callable[[str], float]
    failing: set[str] = field(default_factory=set)
    jobs: list[dict[str, Any]] = field(default_factory=list)

    def claim(self) -> dict[str, Any] | None:
        response = self.agent.client.post("/api/v1/jobs/claim/")
        if response.status_code == 204:
            return None
        assert response.status_code == 200, response.content
        return response.json()

    def list_range(self, good: str, commits: list[dict[str, Any]]) -> dict[str, Any]:
        job = self.claim()
        assert job is not None and job["bisect_range"]
        response = self.agent.client.post(
            f"/api/v1/jobs/{job['id']}/range/",
            {"attempt": job["attempt"], "good": good, "bad": commits[0]["sha"], "commits": commits},
            format="json",
        )
        assert response.status_code == 201, response.content
        self.finish(job)
        return job

    def finish(self, job: dict[str, Any], **failure: str) -> None:
        body = {"outcome": "failed", **failure} if failure else {"outcome": "done"}
        response = self.agent.client.post(f"/api/v1/jobs/{job['id']}/finish/", body, format="json")
        assert response.status_code == 200, response.content

    def step(self, *, advance: bool = True) -> dict[str, Any] | None:
        """Claim, measure (upload a run per version), finish, aggregate, advance (unless not:
        as when the broker lost the advance)."""
        job = self.claim()
        if job is None:
            return None
        self.jobs.append(job)
        shas = [job["builds"][v]["source"]["ref"] for v in job["versions"]]
        if any(s in self.failing for s in shas):
            self.finish(job, stage="build", message="build failed at make: error")
        else:
            for version, commit in zip(job["versions"], shas, strict=True):
                self.upload(job, version, commit)
            self.finish(job)
        for run in Run.objects.filter(job_id=job["id"]):
            run_aggregate(run_id=run.pk)
        if advance:
            bisection_advance(bisection_id=Bisection.objects.get().pk)
        return job

    def upload(self, job: dict[str, Any], version: str, commit: str) -> None:
        level = job["clients"][0]
        base = self.tps(commit)
        count = len([j for j in self.jobs if version in j["versions"]])
        results = [
            result(level, r, base * (1 + 0.002 * ((r + count) % 3 - 1)), samples=0)
            for r in range(1, job["repeats"] + 1)
        ]
        payload = run_payload(
            version=version,
            clients=(level,),
            repeats=job["repeats"],
            results=results,
            job={"id": job["id"], "attempt": job["attempt"]},
        )
        response = self.agent.client.post("/api/v1/runs/", payload, format="json")
        assert response.status_code == 201, response.content

    def until_done(self, limit: int = 20) -> Bisection:
        for _ in range(limit):
            if self.step() is None:
                break
        return Bisection.objects.get()
