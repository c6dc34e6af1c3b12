"""Tablespaces: the host's [tablespaces] configuration, a job's names, and a real job whose
pgbench tables land in them (JobRunner against a prebuilt PostgreSQL 14)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import open_tmpdir

from benchhub_runner.config import Config, ConfigError, config_load
from benchhub_runner.host.disks import DiskCounters
from benchhub_runner.job.cleanup import stale_clusters_stop
from benchhub_runner.job.runner import JobRunner
from benchhub_runner.jobspec.spec import JobSpecError, job_parse
from benchhub_runner.measure.pgbench import Target, init_argv
from benchhub_runner.servers.tablespaces import RECORD as TABLESPACES_RECORD
from benchhub_runner.servers.tablespaces import DeviceIO, JobTablespaces, TablespaceError
from benchhub_runner.transport.client import Client

CLAIM = {
    "id": 7,
    "attempt": 1,
    "versions": ["14"],
    "repeats": 1,
    "duration_s": 1.0,
    "warmup_s": 0,
    "scale": 1,
    "clients": [1],
    "workload": {"name": "select-only", "builtin": "select-only"},
}


def _config(tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> Config:
    monkeypatch.delenv("BENCHHUB_CONFIG", raising=False)
    path = tmp_path / "agent.toml"
    path.write_text('server = "http://x:1"\n' + text)
    return config_load(path=path, overrides={"token": "bhr_flag"})


def test_it_reads_the_tablespaces_table(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    config = _config(
        tmp_path, f'[tablespaces]\nfast = "{tmp_path}/a"\nslow = "{tmp_path}/b"\n', monkeypatch
    )
    assert config.tablespaces == {"fast": tmp_path / "a", "slow": tmp_path / "b"}
    assert _config(tmp_path, "", monkeypatch).tablespaces == {}


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('"Fast" = "{dir}"', r"tablespaces\.Fast: use 1 to 63 lower-case"),
        ('pg_fast = "{dir}"', r"tablespaces\.pg_fast: .*not pg_"),
        ('fast = "relative/dir"', r"tablespaces\.fast: give an absolute directory"),
        ('fast = "{dir}/missing"', r"tablespaces\.fast: .*missing is not a directory"),
        ("fast = 3", r"tablespaces\.fast: give an absolute directory"),
    ],
)
def test_it_names_a_bad_tablespace_entry(tmp_path, monkeypatch, table, message):
    with pytest.raises(ConfigError, match=message):
        _config(tmp_path, "[tablespaces]\n" + table.format(dir=tmp_path) + "\n", monkeypatch)


def test_a_job_names_tablespaces_never_paths():
    assert job_parse({**CLAIM, "tablespaces": ["fast", "slow"]}).tablespaces == ("fast", "slow")
    assert job_parse(CLAIM).tablespaces == ()
    for bad, field in ((["/mnt/x"], "tablespaces[0]"), (["a", "a"], "tablespaces")):
        with pytest.raises(JobSpecError) as caught:
            job_parse({**CLAIM, "tablespaces": bad})
        assert caught.value.field == field


def test_pgbench_init_puts_tables_in_the_first_and_indexes_in_the_last():
    target = Target(host="/run/postgresql", port=5432, user="u")
    argv = init_argv(bindir=Path("/b"), target=target, scale=2, tablespaces=("data", "idx"))
    assert argv[1:4] == ["-i", "--tablespace=data", "--index-tablespace=idx"]
    assert "--tablespace" not in " ".join(init_argv(bindir=Path("/b"), target=target, scale=2))


def test_a_job_naming_a_tablespace_the_host_lacks_is_refused_with_the_offer():
    with pytest.raises(TablespaceError, match=r"slow are not configured .*offers: fast"):
        JobTablespaces.for_job(names=("slow",), configured={"fast": Path("/x")}, prefix="p")


def test_device_io_sums_measurements_into_rates():
    io = DeviceIO("sda")
    io.add(DiskCounters(10, 0, 20, 0, 0), DiskCounters(30, 2048, 60, 4096, 500), 2.0)
    io.add(DiskCounters(0, 0, 0, 0, 0), DiskCounters(0, 0, 20, 2048, 500), 2.0)
    assert io.figures() == {
        "read_bytes_per_s": 262144.0,
        "write_bytes_per_s": 786432.0,
        "read_iops": 5.0,
        "write_iops": 15.0,
        "util_pct": 25.0,
    }


def test_the_agent_offers_its_tablespaces_when_it_claims(monkeypatch):
    sent: list[Any] = []
    client = Client(server="http://127.0.0.1:9", token="t")

    def request(method: str, path: str, body: Any = None, **_: Any) -> Any:
        sent.append(body)
        return type("R", (), {"status": 204, "body": None})()

    monkeypatch.setattr(client, "request", request)
    client.claim(tablespaces=["fast", "slow"])
    client.claim()
    assert sent == [{"tablespaces": ["fast", "slow"]}, None]


# Recorded by the level's setup, after pgbench -i: where each pgbench relation lives.
PLACED = (
    "CREATE TABLE IF NOT EXISTS placed AS SELECT c.relname::text AS relname, "
    "t.spcname::text AS spcname, pg_tablespace_location(t.oid) AS location FROM pg_class c "
    "JOIN pg_tablespace t ON t.oid = c.reltablespace WHERE c.relname LIKE 'pgbench_%'"
)


@pytest.mark.slow
def test_pgbench_tables_land_in_the_configured_tablespaces_and_the_directories_go(
    prebuilt14, client_bindir
):
    """Only a real server proves CREATE TABLESPACE in the agent's directory as the server's
    account, the job role's grant, pgbench -i's placement and the removal at the end."""
    work, data_dir, index_dir = (open_tmpdir(f"benchhub-ts-{n}-") for n in ("w", "d", "i"))
    config = Config(
        server="http://127.0.0.1:9",
        token="unused",
        host="test-host",
        work_dir=work,
        client_bindir=client_bindir,
        installations={"14": prebuilt14.bindir},
        allow_download=False,
        job_timeout_s=600,
        tablespaces={"data": data_dir, "idx": index_dir},
        profile=False,
    )
    workload = {**CLAIM["workload"], "level_setup": [PLACED]}
    job = job_parse({**CLAIM, "workload": workload, "tablespaces": ["data", "idx"]})
    runner = JobRunner(job=job, config=config, stop=threading.Event(), report=print)
    try:
        (payload,) = runner.execute()
        assert not payload["results"][0]["aborted"], payload["results"][0]["errors"]
        cluster = runner.runs[0].cluster
        cluster.start()
        try:
            rows = cluster.sql("SELECT relname, spcname, location FROM public.placed ORDER BY 1")
        finally:
            cluster.stop()
    finally:
        runner.cleanup()
    placed = {line.split("|")[0]: line.split("|")[1:] for line in rows.splitlines()}
    location = {"data": f"{data_dir}/benchhub-7-1-v0", "idx": f"{index_dir}/benchhub-7-1-v0"}
    assert placed["pgbench_accounts"] == ["data", location["data"]]
    assert placed["pgbench_accounts_pkey"] == ["idx", location["idx"]]
    # The job's subdirectories are gone; the host's directories stay.
    assert list(data_dir.iterdir()) == [] and list(index_dir.iterdir()) == []
    evidence = {t["name"]: t for t in payload["tablespaces"]}
    st_dev = os.stat(data_dir).st_dev
    assert evidence["data"]["dev"] == f"{os.major(st_dev)}:{os.minor(st_dev)}"
    assert evidence["data"]["location"] == location["data"]
    assert evidence["data"]["measured_s"] > 0 or not evidence["data"]["device"]


def test_an_agent_after_a_killed_one_removes_its_jobs_tablespace_directories(tmp_path):
    configured, elsewhere = tmp_path / "disk", tmp_path / "elsewhere"
    left = configured / "benchhub-3-1-v0"
    foreign = [configured / "kept-by-the-owner", elsewhere / "benchhub-3-1-v0"]
    for directory in (left, *foreign):
        (directory / "PG_14_202107181").mkdir(parents=True)
    job_dir = tmp_path / "work" / "jobs" / "3-1"
    job_dir.mkdir(parents=True)
    (job_dir / TABLESPACES_RECORD).write_text("".join(f"{d}\n" for d in (left, *foreign)))

    stale_clusters_stop(tmp_path / "work" / "jobs", tablespaces={"fast": configured})
    assert not left.exists() and not job_dir.exists()
    # Only a job's own subdirectory of a configured directory: never what else a record names.
    assert all(directory.exists() for directory in foreign)
