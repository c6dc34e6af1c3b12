"""`benchhub-runner import`: a folder of real pgbench outputs becomes one run in the repository."""

import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from django.db import connection
from rest_framework.test import APIClient

from benchhub.accounts.services import personal_token_create
from benchhub.testing.processes import ROOT

FIXTURES = ROOT / "runners" / "tests" / "fixtures" / "pgbench"
SOURCE_DB = "benchhub_import_source"


@pytest.fixture(scope="module")
def pgbench_outputs(tmp_path_factory, django_db_blocker, client_bindir: Path):
    """Real pgbench -S outputs at clients 1, 1 and 2, against the suite's PostgreSQL server;
    2 s each, since a 1 s run may end before its first -P line."""
    with django_db_blocker.unblock():
        db = connection.settings_dict
    bindir = client_bindir
    conninfo = dict(host=db["HOST"], port=db["PORT"], user=db["USER"], dbname="postgres")
    with psycopg.connect(**conninfo, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {SOURCE_DB}")
        admin.execute(f"CREATE DATABASE {SOURCE_DB}")
    target = ["-h", db["HOST"], "-p", str(db["PORT"]), "-U", db["USER"]]
    subprocess.run(
        [str(bindir / "pgbench"), "-i", "-s", "1", *target, SOURCE_DB],
        check=True,
        capture_output=True,
    )
    folder = tmp_path_factory.mktemp("outputs")
    for name, clients in (("c1-a", 1), ("c1-b", 1), ("c2", 2)):
        done = subprocess.run(
            [
                str(bindir / "pgbench"),
                "-S",
                "-M",
                "prepared",
                "-T",
                "2",
                "-P",
                "1",
                "-r",
                "-c",
                str(clients),
                "-j",
                str(clients),
                *target,
                SOURCE_DB,
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        (folder / f"{name}.txt").write_text(done.stdout + done.stderr)
    yield folder
    with psycopg.connect(**conninfo, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {SOURCE_DB}")


def runner(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "benchhub_runner.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_imports_a_folder_as_one_run_with_a_result_per_level(live_server, bob, pgbench_outputs):
    _, token = personal_token_create(user=bob, name="import")
    files = sorted(str(p) for p in pgbench_outputs.glob("*.txt"))
    done = runner(
        "import",
        *files,
        "--server",
        live_server.url,
        "--token",
        token,
        "--version",
        "15.4",
        "--host",
        "old-laptop",
    )
    assert done.returncode == 0, done.stderr
    assert "3 results at clients 1, 2" in done.stdout
    api = APIClient()
    run = api.get("/api/v1/runs/", {"host": "old-laptop"}).json()["results"][0]
    assert (run["version"], run["source"], run["clients"], run["repeats"]) == (
        "15.4",
        "import",
        [1, 2],
        2,
    )
    assert run["workload"] == "select-only" and run["scale"] == 1
    listed = api.get(f"/api/v1/runs/{run['run_uuid']}/results/", {"progress": "true"}).json()
    results = listed["results"]
    assert [(r["clients"], r["repeat"]) for r in results] == [(1, 1), (1, 2), (2, 1)]
    raw = (pgbench_outputs / "c2.txt").read_text()
    assert results[2]["raw_output"] == raw
    printed_tps = float(raw.split("tps = ")[1].split()[0])
    assert results[2]["tps"] == pytest.approx(printed_tps)
    assert all(r["progress"] for r in results)


def test_it_refuses_files_of_different_workloads_by_name(db):
    select_only = FIXTURES / "pg15-select-only-P1-r-T3.txt"
    tpcb = FIXTURES / "pg15-tpcb-like-t50.txt"
    done = runner(
        "import",
        str(select_only),
        str(tpcb),
        "--server",
        "http://127.0.0.1:9",
        "--token",
        "bhp_x",
        "--version",
        "15.4",
        "--host",
        "h",
        "--dry-run",
    )
    assert done.returncode == 2
    assert str(tpcb) in done.stderr and "Traceback" not in done.stderr


def test_it_refuses_text_that_is_not_pgbench_output_by_name(tmp_path, db):
    notes = tmp_path / "notes.txt"
    notes.write_text("we ran pgbench yesterday and it was fast\n")
    done = runner(
        "import",
        str(notes),
        "--server",
        "http://127.0.0.1:9",
        "--token",
        "bhp_x",
        "--version",
        "15.4",
        "--host",
        "h",
    )
    assert done.returncode == 2 and str(notes) in done.stderr
