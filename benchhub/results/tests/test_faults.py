"""Uploads while Redis is down: the API keeps storing runs, and their analysis runs once Redis is
back (the sweep results.aggregate_pending, which beat sends every minute).

gunicorn and a real Celery worker use a redis-server of the test's own, which the test stops and
starts; the shared Redis is never touched.
"""

import json
import os
import subprocess
import time
import urllib.request
from datetime import timedelta

import pytest
from django.utils import timezone

from benchhub.hosts.services import runner_token_create
from benchhub.results.models import LevelAggregate, Run
from benchhub.testing import processes
from benchhub.testing.payloads import run_payload
from benchhub.testing.private import PrivateRedis

pytestmark = pytest.mark.slow

UPLOADS = 3


def upload(server: str, token: str, payload: dict) -> tuple[int, float]:
    request = urllib.request.Request(  # noqa: S310 - the test's own server
        f"{server}/api/v1/runs/",
        data=json.dumps(payload).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=60) as reply:  # noqa: S310
        return reply.status, time.monotonic() - started


def supervised(worker: processes.Service) -> bool:
    """Start ``worker`` again if it exited, as its supervisor does in a deployment (compose's
    restart policy, a Kubernetes Deployment): Celery's worker may exit when its broker goes away
    (kombu can fail while it closes the lost connection). Always True."""
    if worker.process is not None and worker.process.poll() is not None:
        print("--- the worker exited; started again, as its supervisor would ---")
        worker.start()
    return True


def wait_for(predicate, *, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def test_it_stores_uploads_while_redis_is_down_and_analyses_them_when_it_is_back(
    transactional_db,
):
    redis = PrivateRedis().start()
    queue = processes.unique_queue()
    env = {"REDIS_URL": redis.url}
    server = processes.Gunicorn(queue=queue, env=env).start()
    worker = processes.celery_worker(queue, env=env).start()
    _, token = runner_token_create(host_name="bench-01")
    try:
        assert upload(server.url, token, run_payload())[0] == 201
        # The upload writes its level aggregates itself; the worker's part is done when it
        # marks the run aggregated.
        wait_for(
            lambda: not Run.objects.filter(aggregated_at__isnull=True).exists(),
            timeout_s=60,
            what="the worker",
        )
        redis.stop()
        down = [upload(server.url, token, run_payload(version=f"16.{i}")) for i in range(UPLOADS)]
        assert [status for status, _ in down] == [201] * UPLOADS
        assert max(seconds for _, seconds in down) < 10, down  # a publish gives up quickly
        pending = Run.objects.filter(aggregated_at__isnull=True)
        assert pending.count() == UPLOADS
        redis.start()
        # The sweep leaves runs younger than its grace period to their own task: age them.
        pending.update(created_at=timezone.now() - timedelta(minutes=5))
        sweep = ["call", "results.aggregate_pending", "--queue", queue]
        subprocess.run(
            [str(processes.BIN / "celery"), "-A", "benchhub", *sweep],
            cwd=processes.ROOT,
            env={**os.environ, **env},
            check=True,
            capture_output=True,
        )
        wait_for(
            lambda: (
                supervised(worker) and not Run.objects.filter(aggregated_at__isnull=True).exists()
            ),
            timeout_s=60,
            what="the sweep to aggregate the runs uploaded while Redis was down",
        )
        assert LevelAggregate.objects.count() == 2 * (1 + UPLOADS)
    finally:
        worker.stop()
        server.stop()
        redis.stop()
        print(f"--- worker ---\n{worker.output()[-3000:]}")
        print(f"--- gunicorn ---\n{server.output()[-3000:]}")
