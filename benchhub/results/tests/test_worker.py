"""A real Celery worker process aggregates an upload after it commits."""

import json
import statistics
import time

from django.conf import settings

from benchhub.results.models import LevelAggregate, Run
from benchhub.testing.payloads import run_payload


def test_it_aggregates_an_upload_in_a_real_worker(analysis_worker, agent):
    assert settings.CELERY_BROKER_URL.startswith("redis://")
    payload = run_payload(repeats=2, clients=(1, 2))
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201
    run = Run.objects.get(uuid=payload["run_uuid"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and LevelAggregate.objects.filter(run=run).count() < 2:
        time.sleep(0.25)
    medians = dict(LevelAggregate.objects.filter(run=run).values_list("clients", "tps_median"))
    expected = {
        c: statistics.median(r["tps"] for r in payload["results"] if r["clients"] == c)
        for c in (1, 2)
    }
    assert medians == expected
    run.refresh_from_db()
    assert run.aggregated_at is not None
