"""The queue when its database goes away: a private PostgreSQL restarted while agents claim.

gunicorn runs on a PostgreSQL of the test's own (never the shared one), migrated by
`manage.py migrate`; agents are threads making the agent's HTTP calls with runner tokens and its
retries. The test reads the outcome with psycopg, straight from that database.
"""

import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter

import psycopg
import pytest

from benchhub.testing import processes
from benchhub.testing.payloads import run_payload
from benchhub.testing.private import PrivatePostgres

pytestmark = pytest.mark.slow

JOBS = 40
AGENTS = 5
SETUP = """
import json
from benchhub.hosts.services import runner_token_create
from benchhub.jobs.services import job_create
tokens = [runner_token_create(host_name=f"fault-{{i}}")[1] for i in range({agents})]
job = {{"versions": ["15"], "workload": {{"name": "select-only", "builtin": "select-only",
       "scripts": [], "setup": []}}, "scale": 1, "clients": [1], "duration_s": 2.0, "repeats": 1}}
for _ in range({jobs}):
    job_create(actor="test", **job)
print("TOKENS=" + json.dumps(tokens))
"""


def manage(database_url: str, *argv: str) -> str:
    env = {**os.environ, "DATABASE_URL": database_url}
    done = subprocess.run(
        [sys.executable, "manage.py", *argv],
        cwd=processes.ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture
def private_postgres():
    cluster = PrivatePostgres().start()
    try:
        manage(cluster.url(), "migrate", "--no-input")
        yield cluster
    finally:
        cluster.stop()


class Agent(threading.Thread):
    """Claims, uploads the job's run and finishes it, until the queue stays empty; retries a
    refused connection or a 5xx for up to a minute, as the agent's client does."""

    def __init__(self, *, server: str, token: str, host: str, seen: list, lock) -> None:
        super().__init__(daemon=True)
        self.server, self.token, self.host = server, token, host
        self.seen, self.lock = seen, lock
        self.errors: list[str] = []
        self.retries = 0

    def call(self, path: str, body: dict | None = None) -> tuple[int, dict]:
        data = json.dumps(body or {}).encode()
        deadline = time.monotonic() + 60
        while True:
            request = urllib.request.Request(  # noqa: S310 - the test's own server
                f"{self.server}{path}",
                data=data,
                method="POST",
                headers={
                    "Authorization": f"Bearer {self.token}",
                    "Content-Type": "application/json",
                },
            )
            try:
                with urllib.request.urlopen(request, timeout=30) as reply:  # noqa: S310
                    text = reply.read()
                    return reply.status, json.loads(text) if text else {}
            except urllib.error.HTTPError as error:
                if error.code < 500:
                    return error.code, json.loads(error.read() or b"{}")
                failure = f"{error.code}"
            except OSError as error:
                failure = repr(error)
            self.retries += 1
            if time.monotonic() > deadline:
                raise AssertionError(f"{path} kept failing: {failure}")
            time.sleep(0.3)

    def run(self) -> None:
        try:
            self.work()
        except Exception as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(repr(exc))

    def work(self) -> None:
        idle = 0
        while idle < 3:
            status, job = self.call("/api/v1/jobs/claim/")
            if status == 204:
                idle += 1
                time.sleep(0.5)
                continue
            assert status == 200, (status, job)
            idle = 0
            with self.lock:
                self.seen.append((job["id"], job["attempt"], self.host))
            payload = run_payload(host=self.host, version="15.4", repeats=1, clients=(1,))
            payload["job"] = {"id": job["id"], "attempt": job["attempt"]}
            status, body = self.call("/api/v1/runs/", payload)
            if status == 409:  # the job was taken back meanwhile: claim again
                continue
            assert status in (200, 201), (status, body)
            time.sleep(0.05)
            status, body = self.call(f"/api/v1/jobs/{job['id']}/finish/", {"outcome": "done"})
            # 409 when a retried finish finds its first attempt committed: the job is done.
            assert status in (200, 409), (status, body)


def done_count(url: str) -> int:
    with psycopg.connect(url) as db:
        return db.execute("SELECT count(*) FROM jobs_job WHERE state = 'done'").fetchone()[0]


def test_it_loses_and_doubles_no_job_when_postgresql_restarts_under_claiming_agents(
    private_postgres,
):
    url = private_postgres.url()
    out = manage(url, "shell", "-c", SETUP.format(agents=AGENTS, jobs=JOBS))
    tokens = json.loads(out.split("TOKENS=", 1)[1])
    server = processes.Gunicorn(
        queue=processes.unique_queue(), env={"DATABASE_URL": url, "BENCHHUB_JOB_LEASE_S": "600"}
    ).start()
    seen: list[tuple[int, int, str]] = []
    lock = threading.Lock()
    agents = [
        Agent(server=server.url, token=token, host=f"fault-{i}", seen=seen, lock=lock)
        for i, token in enumerate(tokens)
    ]
    try:
        for agent in agents:
            agent.start()
        deadline = time.monotonic() + 60
        while done_count(url) < JOBS // 4 and time.monotonic() < deadline:
            time.sleep(0.1)
        private_postgres.restart()
        restarted_at_done = done_count(url)
        for agent in agents:
            agent.join(timeout=180)
    finally:
        server.stop()
    assert not [a for a in agents if a.is_alive()], "an agent hung"
    assert [e for a in agents for e in a.errors] == [], server.output()[-3000:]
    assert restarted_at_done < JOBS, "the restart came after the queue was empty"
    # No attempt was handed to two agents.
    assert not [k for k, n in Counter((j, a) for j, a, _ in seen).items() if n > 1]
    with psycopg.connect(url) as db:
        jobs = db.execute("SELECT id, state, attempt FROM jobs_job ORDER BY id").fetchall()
        claims = db.execute(
            "SELECT job_id, attempt, count(*) FROM jobs_jobevent WHERE kind = 'claimed' "
            "GROUP BY job_id, attempt"
        ).fetchall()
        runs = db.execute(
            "SELECT job_id, job_attempt, count(*) FROM results_run GROUP BY job_id, job_attempt"
        ).fetchall()
    assert len(jobs) == JOBS
    assert {state for _, state, _ in jobs} == {"done"}, jobs
    # Every attempt was claimed exactly once, and each job stored one run, of its last attempt.
    every_attempt = {(job_id, n, 1) for job_id, _, attempt in jobs for n in range(1, attempt + 1)}
    assert set(claims) == every_attempt
    assert sorted((job_id, attempt, 1) for job_id, _, attempt in jobs) == sorted(runs)
    retries = sum(a.retries for a in agents)
    print(f"restart after {restarted_at_done} jobs done; {retries} retried calls")
