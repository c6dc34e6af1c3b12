"""`make backup` / `make restore`: a restored repository has exactly the same runs and results."""

import json
import os
import subprocess
import sys
import uuid

import psycopg
import pytest
from django.db import connection

from benchhub.testing import installs
from benchhub.testing.payloads import run_payload
from benchhub.testing.processes import ROOT, current_database_url

SNAPSHOT = """
    SELECT r.uuid, b.version, h.name, res.clients, res.repeat, res.tps,
           (SELECT o.text FROM results_resultoutput o WHERE o.result_id = res.id),
           (SELECT cardinality(p.t) FROM results_progressseries p WHERE p.result_id = res.id)
    FROM results_run r JOIN builds_build b ON b.id = r.build_id
    JOIN hosts_host h ON h.id = r.host_id JOIN results_result res ON res.run_id = r.id
    ORDER BY r.uuid, res.clients, res.repeat
"""


def backup(command: str, path, url: str) -> subprocess.CompletedProcess:
    # pg_dump and pg_restore 18 from the wheel, whatever the machine has: they read any older
    # server's database too.
    env = {**os.environ, "DATABASE_URL": url, "BENCHHUB_PG_BINDIR": str(installs.client_bindir())}
    return subprocess.run(
        [sys.executable, "scripts/backup.py", command, str(path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def scratch_database():
    db = connection.settings_dict
    name = f"bh_restore_{uuid.uuid4().hex[:8]}"
    conninfo = {"host": db["HOST"], "port": db["PORT"], "user": db["USER"], "dbname": "postgres"}
    with psycopg.connect(**conninfo, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{name}"
    with psycopg.connect(**conninfo, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def snapshot(url: str) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute(SNAPSHOT).fetchall()


@pytest.mark.django_db(transaction=True)
def test_it_restores_a_repository_with_the_same_runs_and_results(agent, tmp_path, scratch_database):
    for version in ("13.3", "14beta1", "14.0"):
        response = agent.client.post(
            "/api/v1/runs/",
            data=json.dumps(run_payload(version=version)),
            content_type="application/json",
        )
        assert response.status_code == 201
    original = snapshot(current_database_url())
    assert len(original) == 12
    dump = tmp_path / "benchhub.dump"
    made = backup("dump", dump, current_database_url())
    assert made.returncode == 0, made.stderr
    restored = backup("restore", dump, scratch_database)
    assert restored.returncode == 0, restored.stderr
    assert snapshot(scratch_database) == original


def test_it_fails_clearly_to_restore_a_missing_file(tmp_path, db):
    done = backup("restore", tmp_path / "nope.dump", current_database_url())
    assert done.returncode == 1 and "no backup file" in done.stderr
