"""Reads from a real streaming replica (DATABASE_REPLICA_URL): gunicorn on a private primary and
its replica made by pg_basebackup. Anonymous reads are answered by the replica (a run whose
replay is paused is not there yet), the uploader reads its own write from the primary, a replica
lagging past the bound is skipped, and so is one that is stopped.

Slow (about 50 s): only a real replica can show its lag and its absence, and it needs a primary
of its own with the schema (initdb, migrate, pg_basebackup), then waits out the lag bound."""

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

import psycopg
import pytest

from benchhub.results.tests.test_faults import wait_for
from benchhub.testing import processes
from benchhub.testing.payloads import run_payload
from benchhub.testing.private import PrivatePostgres, PrivateReplica

pytestmark = pytest.mark.slow

MAX_LAG_S = 6


def manage(*argv: str, url: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *argv],
        cwd=processes.ROOT,
        env={**os.environ, "DATABASE_URL": url},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout


def status(server: str, path: str, *, token: str = "", payload: dict | None = None) -> int:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(  # noqa: S310 - the test's own server
        f"{server}{path}",
        data=None if payload is None else json.dumps(payload).encode(),
        method="GET" if payload is None else "POST",
        headers=headers,
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:  # noqa: S310
            return reply.status
    except urllib.error.HTTPError as refused:
        return refused.code


def replica_has(replica: PrivateReplica, run_uuid: str) -> bool:
    with psycopg.connect(replica.url()) as conn:
        found = conn.execute("SELECT 1 FROM results_run WHERE uuid = %s", [run_uuid]).fetchone()
        return found is not None


def test_it_reads_the_replica_unless_it_lags_or_is_gone_and_the_writer_reads_its_writes():
    primary = PrivatePostgres().start()
    replica = PrivateReplica(primary)
    server = None
    try:
        manage("migrate", "-v0", url=primary.url())
        token = manage("runner_create", "bench-01", url=primary.url()).strip()
        replica.start()
        env = {
            "DATABASE_URL": primary.url(),
            "DATABASE_REPLICA_URL": replica.url(),
            "BENCHHUB_REPLICA_MAX_LAG_S": str(MAX_LAG_S),
            "BENCHHUB_REPLICA_PIN_S": str(MAX_LAG_S + 4),
        }
        server = processes.Gunicorn(queue=processes.unique_queue(), env=env).start()

        first = run_payload(version="15.4")
        assert status(server.url, "/api/v1/runs/", token=token, payload=first) == 201
        wait_for(lambda: replica_has(replica, first["run_uuid"]), timeout_s=10, what="replay")
        assert status(server.url, f"/api/v1/runs/{first['run_uuid']}/") == 200

        with psycopg.connect(replica.url(), autocommit=True) as conn:
            conn.execute("SELECT pg_wal_replay_pause()")
        second = run_payload(version="16.1")
        assert status(server.url, "/api/v1/runs/", token=token, payload=second) == 201
        path = f"/api/v1/runs/{second['run_uuid']}/"
        assert status(server.url, path) == 404  # anonymous: the replica, which lacks it
        assert status(server.url, path, token=token) == 200  # its writer: the primary

        # Past the bound the replica is skipped: everyone reads the primary.
        wait_for(lambda: status(server.url, path) == 200, timeout_s=3 * MAX_LAG_S, what="skip")
        assert not replica_has(replica, second["run_uuid"])

        with psycopg.connect(replica.url(), autocommit=True) as conn:
            conn.execute("SELECT pg_wal_replay_resume()")
        wait_for(lambda: replica_has(replica, second["run_uuid"]), timeout_s=10, what="resume")
        replica.stop()
        time.sleep(1.1)  # the last check, which found it up, expires
        assert status(server.url, path) == 200
        assert status(server.url, "/") == 200
        assert status(server.url, f"/runs/{first['run_uuid']}/") == 200
    finally:
        if server is not None:
            server.stop()
            print(f"--- gunicorn ---\n{server.output()[-3000:]}")
        replica.stop()
        print(f"--- replica ---\n{replica.log()}")
        primary.stop()
