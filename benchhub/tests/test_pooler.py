"""BenchHub behind pgbouncer in transaction mode (DATABASE_POOLER=transaction): a real gunicorn
and a real Celery worker reach the test database only through Debian's pgbouncer, with fewer
server connections than clients, and the core flows work; the one construct of Django that
transaction pooling breaks (a server-side cursor outliving its transaction) is shown to break
without the setting and to work with it."""

import json
import os
import subprocess
import sys
import urllib.request

import pytest
from django.core.exceptions import ImproperlyConfigured

from benchhub.hosts.services import runner_token_create
from benchhub.jobs.serializers import JobInSerializer
from benchhub.jobs.services import job_create
from benchhub.jobs.tests.test_queue import JOB
from benchhub.results.models import LevelAggregate, Run
from benchhub.results.tests.test_faults import wait_for
from benchhub.settings import database_from_url
from benchhub.testing import processes
from benchhub.testing.payloads import run_payload
from benchhub.testing.pooler import PgBouncer

URL = "postgres://benchhub@db.example.org:6432/benchhub"


@pytest.fixture
def pgbouncer(transactional_db):
    pooler = PgBouncer(pool_size=2).start()
    yield pooler
    pooler.stop()


def test_it_turns_server_side_cursors_off_behind_a_transaction_pooler():
    assert database_from_url(URL)["DISABLE_SERVER_SIDE_CURSORS"] is False
    assert database_from_url(URL, pooler="session")["DISABLE_SERVER_SIDE_CURSORS"] is False
    assert database_from_url(URL, pooler="transaction")["DISABLE_SERVER_SIDE_CURSORS"] is True


@pytest.mark.parametrize(
    ("url", "named"),
    [
        (f"{URL}?prepare_threshold=5", "prepare_threshold"),
        (f"{URL}?server_side_binding=true", "server_side_binding"),
    ],
)
def test_it_refuses_server_prepared_statements_behind_a_transaction_pooler(url, named):
    database_from_url(url, pooler="session")  # fine where a client keeps its server connection
    with pytest.raises(ImproperlyConfigured, match=named):
        database_from_url(url, pooler="transaction")


def test_it_names_the_setting_of_an_unknown_pooler():
    with pytest.raises(ImproperlyConfigured, match=r"DATABASE_POOLER.*'statement'"):
        database_from_url(URL, pooler="statement")


# QuerySet.iterator() outside a transaction reads through chunked_cursor(): by default a cursor
# declared WITH HOLD on one server connection and fetched from by later statements, which the
# pooler sends to whichever server connection is free. Run in a process of its own, configured by
# the environment exactly as the web server and the workers are.
CHUNKED_READ = """
import django, psycopg, os
django.setup()
from django.contrib.auth.models import Permission
rows = Permission.objects.order_by("pk").values_list("pk", flat=True)
chunks = rows.iterator(chunk_size=1)
first = next(chunks)
with psycopg.connect(os.environ["DATABASE_URL"]) as other:
    other.execute("SELECT 1")  # opens a transaction: holds the idle server connection
    read = [first, *chunks]
print(len(read) > 1 and read == list(rows))
"""


@pytest.mark.parametrize("pooler", ["", "transaction"])
def test_a_chunked_read_survives_another_client_taking_its_server_connection(pgbouncer, pooler):
    env = {**os.environ, "DATABASE_URL": pgbouncer.url, "DATABASE_POOLER": pooler}
    env["DJANGO_SETTINGS_MODULE"] = "benchhub.settings"
    done = subprocess.run(
        [sys.executable, "-c", CHUNKED_READ],
        cwd=processes.ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if pooler == "transaction":
        assert (done.returncode, done.stdout) == (0, "True\n"), done.stderr
    else:
        assert done.returncode != 0
        assert "does not exist" in done.stderr, done.stderr


def call(server: str, path: str, *, token: str, payload: dict | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(  # noqa: S310 - the test's own server
        f"{server}{path}",
        data=None if payload is None else json.dumps(payload).encode(),
        method="GET" if payload is None else "POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as reply:  # noqa: S310
        return reply.status, reply.read()


def test_it_serves_uploads_claims_and_pages_through_pgbouncer(pgbouncer):
    queue = processes.unique_queue()
    env = {"DATABASE_URL": pgbouncer.url, "DATABASE_POOLER": "transaction"}
    # Two gunicorn workers and a Celery worker: three clients on two server connections.
    server = processes.Gunicorn(queue=queue, env=env).start()
    worker = processes.celery_worker(queue, env=env).start()
    _, token = runner_token_create(host_name="bench-01")
    try:
        for version in ("15.4", "16.1"):
            status, _ = call(
                server.url, "/api/v1/runs/", token=token, payload=run_payload(version=version)
            )
            assert status == 201
        # The upload writes the level aggregates itself; the worker's part (through the
        # pooler too) is done when it marks both runs aggregated.
        assert LevelAggregate.objects.count() == 4
        wait_for(
            lambda: not Run.objects.filter(aggregated_at__isnull=True).exists(),
            timeout_s=60,
            what="the worker's aggregation",
        )

        compare = "/compare/?workload=select-only&host=bench-01&versions=15.4,16.1"
        status, page = call(server.url, compare, token=token)
        assert status == 200
        assert b"16.1" in page and b"15.4" in page

        data = JobInSerializer(data={**JOB, "host": "bench-01"})
        data.is_valid(raise_exception=True)
        job = job_create(**data.validated_data)
        status, body = call(server.url, "/api/v1/jobs/claim/", token=token, payload={})
        assert status == 200
        assert json.loads(body)["id"] == job.pk
        job.refresh_from_db()
        assert job.state == job.State.CLAIMED

        stats = pgbouncer.stats()
        assert stats["total_xact_count"] > 10, stats
    finally:
        worker.stop()
        server.stop()
        print(f"--- pgbouncer ---\n{pgbouncer.log()[-3000:]}")
        print(f"--- worker ---\n{worker.output()[-3000:]}")
        print(f"--- gunicorn ---\n{server.output()[-3000:]}")
