"""A run's size is bounded on the way in (progress and telemetry samples a run) and on the way
out (the run page draws at most MAX_CHART_POINTS points a line, bucket-averaged)."""

import json

import numpy as np
import pytest

from benchhub.api.fields import RecordListField
from benchhub.results import serializers
from benchhub.results.models import ProgressSeries, Run
from benchhub.results.selectors import MAX_CHART_POINTS, progress_points
from benchhub.testing.payloads import result, run_payload


def post(agent, payload):
    return agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )


def test_it_refuses_the_upload_of_800000_samples_naming_the_limit_before_reading_them(
    agent, monkeypatch
):
    payload = run_payload(clients=(1,), repeats=1)
    # Empty samples: counted, never validated (each would be refused if it were read).
    payload["results"][0]["progress"] = [{}] * 800_000

    def read(field, data):
        raise AssertionError("a result's samples were validated before they were counted")

    monkeypatch.setattr(RecordListField, "to_internal_value", read)
    response = post(agent, payload)

    assert response.status_code == 400, response.content[:300]
    (message,) = response.json()["fields"]["results"]
    assert f"At most {serializers.MAX_RUN_SAMPLES} progress and telemetry samples" in message
    assert "800000" in message
    assert not Run.objects.exists()


def test_it_counts_the_samples_of_every_result_together(agent, monkeypatch):
    monkeypatch.setattr(serializers, "MAX_RUN_SAMPLES", 10)
    payload = run_payload(clients=(1, 2), repeats=1)
    payload["results"] = [result(1, 1, 100.0, samples=5), result(2, 1, 200.0, samples=5)]
    assert post(agent, payload).status_code == 201
    payload = {**payload, "run_uuid": "8f5d8f3e-8f44-4d5e-9e36-000000000001"}
    payload["results"][1]["telemetry"] = [{"t": 1.0}]
    response = post(agent, payload)
    assert response.status_code == 400 and "has 11" in response.json()["fields"]["results"][0]


@pytest.fixture
def long_run(agent) -> Run:
    """A run of one result with 5000 one-second samples (tps rising by one each second)."""
    payload = run_payload(clients=(1,), repeats=1)
    payload["results"] = [result(1, 1, 100.0, samples=2)]
    assert post(agent, payload).status_code == 201
    run = Run.objects.get(uuid=payload["run_uuid"])
    (only,) = run.results.all()
    seconds = [float(t) for t in range(1, 5001)]
    none: list[None] = [None] * len(seconds)
    ProgressSeries.objects.filter(result=only).update(
        t=seconds, tps=seconds, latency_ms=[2.0] * len(seconds), stddev_ms=none, failed=none,
        skipped=none, lag_ms=none,
    )  # fmt: skip
    return run


def test_it_averages_a_long_progress_into_buckets_of_consecutive_samples(long_run):
    (only,) = long_run.results.all()

    (line,) = progress_points(result_ids=[only.pk]).values()

    assert len(line.t) == MAX_CHART_POINTS
    # 2.5 samples a bucket: the first holds seconds 1 to 3, the last 4999 and 5000.
    assert line.t == sorted(line.t) and line.t[0] == 2.0 and line.t[-1] == 4999.5
    # tps equals t here: each bucket's averages agree; buckets of 2 or 3 consecutive seconds.
    assert line.tps == line.t and set(line.latency_ms) == {2.0}
    assert set(np.round(np.diff(line.t), 1)) <= {2.0, 2.5, 3.0}


def test_it_keeps_every_sample_of_a_short_progress(long_run):
    (only,) = long_run.results.all()

    (line,) = progress_points(result_ids=[only.pk], max_points=5000).values()

    assert line.t == [float(t) for t in range(1, 5001)]


def test_the_run_page_draws_a_bounded_number_of_points(long_run, client):
    charts = client.get(f"/runs/{long_run.uuid}/charts/").json()
    progress = next(c for c in charts if c["id"].startswith("chart-progress"))
    assert [len(trace["x"]) for trace in progress["figure"]["data"]] == [MAX_CHART_POINTS] * 2
