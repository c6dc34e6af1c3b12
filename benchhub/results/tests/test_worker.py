"""An upload stores its per-level aggregates itself; a real Celery worker process adds the
within-run standard errors after it commits."""

import json
import statistics
import time

from django.conf import settings

from benchhub.compare.tests.uploads import seconds_result
from benchhub.results.models import LevelAggregate, Result, Run
from benchhub.testing.payloads import run_payload


def test_it_aggregates_an_upload_in_a_real_worker(analysis_worker, agent):
    assert settings.CELERY_BROKER_URL.startswith("redis://")
    payload = run_payload(repeats=2, clients=(1, 2), duration_s=20.0)
    payload["results"] = [
        seconds_result(c, r, [100.0 * c + (t * t * r) % 7 for t in range(20)])
        for c in (1, 2)
        for r in (1, 2)
    ]
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201
    run = Run.objects.get(uuid=payload["run_uuid"])
    deadline = time.monotonic() + 60
    while (
        time.monotonic() < deadline
        and not Run.objects.filter(pk=run.pk, aggregated_at__isnull=False).exists()
    ):
        time.sleep(0.25)
    medians = dict(LevelAggregate.objects.filter(run=run).values_list("clients", "tps_median"))
    expected = {
        c: statistics.median(r["tps"] for r in payload["results"] if r["clients"] == c)
        for c in (1, 2)
    }
    assert medians == expected
    run.refresh_from_db()
    assert run.aggregated_at is not None
    errors = Result.objects.filter(run=run).values_list("steady_tps_se", "steady_block")
    assert all(se > 0 and block > 0 for se, block in errors)
