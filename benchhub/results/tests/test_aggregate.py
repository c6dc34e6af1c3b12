"""Per-level aggregates across repeats, as the background task computes them."""

import statistics

import pytest

from benchhub.results.models import LevelAggregate, Run
from benchhub.results.serializers import RunUploadSerializer
from benchhub.results.services import payload_digest, run_aggregate, run_submit
from benchhub.results.tasks import aggregate_pending
from benchhub.testing.payloads import result, run_payload


def submit(payload):
    upload = RunUploadSerializer(data=payload)
    upload.is_valid(raise_exception=True)
    return run_submit(data=upload.validated_data, digest=payload_digest(payload)).run


def test_it_summarizes_each_level_across_repeats(db):
    payload = run_payload(repeats=3, clients=(4,))
    payload["results"] = [result(4, 1, 100.0), result(4, 2, 130.0), result(4, 3, 110.0)]
    run = submit(payload)
    assert run_aggregate(run_id=run.pk) == 1
    agg = LevelAggregate.objects.get(run=run)
    assert (agg.samples, agg.aborted) == (3, 0)
    assert agg.tps_median == 110.0
    assert agg.tps_mean == pytest.approx(340 / 3)
    assert agg.tps_stddev == pytest.approx(statistics.stdev([100.0, 130.0, 110.0]))
    assert (agg.tps_min, agg.tps_max) == (100.0, 130.0)
    assert agg.comparability_key == run.comparability_key
    run.refresh_from_db()
    assert run.aggregated_at is not None


def test_it_leaves_aborted_repeats_out(db):
    payload = run_payload(repeats=2, clients=(2,), status="aborted")
    aborted = result(2, 2, 5.0)
    aborted.update(aborted=True, tps=None, errors=["client 1 aborted"])
    payload["results"] = [result(2, 1, 200.0), aborted]
    run = submit(payload)
    run_aggregate(run_id=run.pk)
    agg = LevelAggregate.objects.get(run=run)
    assert (agg.samples, agg.aborted, agg.tps_median, agg.tps_stddev) == (1, 1, 200.0, None)


def test_it_is_idempotent(db):
    run = submit(run_payload())
    run_aggregate(run_id=run.pk)
    first = list(LevelAggregate.objects.filter(run=run).values_list("clients", "tps_median"))
    run_aggregate(run_id=run.pk)
    assert (
        list(LevelAggregate.objects.filter(run=run).values_list("clients", "tps_median")) == first
    )


def test_it_sweeps_up_runs_whose_task_never_ran(db):
    run = submit(run_payload())
    Run.objects.filter(pk=run.pk).update(created_at=run.created_at.replace(year=2020))
    assert aggregate_pending() == 1
    assert LevelAggregate.objects.filter(run=run).count() == 2
    assert aggregate_pending() == 0
