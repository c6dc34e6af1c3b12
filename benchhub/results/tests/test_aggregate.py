"""Per-level aggregates across repeats, as the background task computes them."""

import io
import math
import statistics

import numpy as np
import pytest
from django.core.management import call_command

from benchhub.results.models import LevelAggregate, Result, Run
from benchhub.results.serializers import RunUploadSerializer
from benchhub.results.services import (
    payload_digest,
    run_aggregate,
    run_submit,
    runs_steady_backfill,
)
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


def _seconds(values):
    return [
        {"t": float(t), "tps": v, "latency_ms": 4000.0 / v, "stddev_ms": 1.0, "failed": 0,
         "skipped": None, "lag_ms": None}
        for t, v in enumerate(values, 1)
    ]  # fmt: skip


def test_it_stores_each_repeats_steady_state_mean_after_the_warm_up(db):
    # 30 s runs: the first 3 s (a tenth, at least 2) are warm-up and left out.
    rng = np.random.default_rng(7)
    seconds = [[50.0, 200.0, 300.0, *(500 + rng.normal(0, 5, 27))] for _ in range(2)]
    payload = run_payload(repeats=3, clients=(4,), duration_s=30.0)
    aborted = result(4, 3, 5.0)
    aborted.update(aborted=True, tps=None, errors=["client 1 aborted"])
    payload["results"] = [
        {**result(4, 1, float(np.mean(seconds[0]))), "progress": _seconds(seconds[0])},
        {**result(4, 2, float(np.mean(seconds[1]))), "progress": _seconds(seconds[1])},
        aborted,
    ]
    run = submit(payload)
    run_aggregate(run_id=run.pk)
    first, second, third = Result.objects.filter(run=run).order_by("repeat")
    for stored, values in ((first, seconds[0]), (second, seconds[1])):
        steady = np.array(values[3:])
        assert stored.steady_tps == pytest.approx(steady.mean())
        assert stored.steady_latency_ms == pytest.approx(np.mean(4000.0 / steady))
        assert stored.steady_seconds == 27 and stored.steady_block >= 1
        # a block bootstrap of 27 noisy seconds: near the plain standard error of their mean
        plain = steady.std(ddof=1) / math.sqrt(27)
        assert 0.3 * plain < stored.steady_tps_se < 3 * plain
    assert third.steady_tps is None and third.steady_seconds == 0
    before = first.steady_tps_se
    run_aggregate(run_id=run.pk)  # seeded by the result: the same numbers again
    first.refresh_from_db()
    assert first.steady_tps_se == before


def test_it_takes_pgbenchs_tps_without_enough_seconds(db):
    run = submit(run_payload(repeats=1, clients=(2,)))  # two progress lines
    run_aggregate(run_id=run.pk)
    stored = Result.objects.get(run=run)
    assert (stored.steady_tps, stored.steady_seconds, stored.steady_tps_se) == (
        stored.tps,
        0,
        0.0,
    )


def test_it_backfills_runs_stored_before_the_steady_state_fields(db):
    runs = [submit(run_payload(repeats=2, clients=(1, 2))) for _ in range(3)]
    for run in runs:
        run_aggregate(run_id=run.pk)
    expected = sorted(Result.objects.values_list("id", "steady_tps", "steady_tps_se"))
    Result.objects.update(steady_tps=None, steady_tps_se=None)
    out = io.StringIO()
    call_command("steady_backfill", "--batch", "2", stdout=out)
    assert "steady-state means computed for 3 runs" in out.getvalue()
    assert sorted(Result.objects.values_list("id", "steady_tps", "steady_tps_se")) == expected
    assert runs_steady_backfill() == []
