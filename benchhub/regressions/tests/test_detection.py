"""Change detection over the history of a series, stored as regressions, once."""

from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from benchhub.compare.tests.uploads import upload
from benchhub.regressions.detection import change_interval
from benchhub.regressions.models import Regression
from benchhub.regressions.services import regression_state_change, run_detect, series_detect
from benchhub.regressions.tasks import detect_run
from benchhub.regressions.tests.series import history, noisy, regression_stored
from benchhub.results.services import run_aggregate
from benchhub.review.services import run_mark

BEFORE = noisy(1000.0, 8, seed=1)
AFTER = noisy(800.0, 6, seed=2)


def test_it_stores_a_step_down_as_a_regression_with_its_runs_and_interval(agent):
    runs = history(agent, BEFORE + AFTER)
    assert run_detect(run_id=runs[-1].pk) == 1
    regression = Regression.objects.get()
    assert regression.kind == "regression" and regression.state == "new"
    assert (regression.run_before, regression.run_after) == (runs[7], runs[8])
    assert regression.host.name == "bench-01" and regression.clients == 4
    assert regression.workload.name == "select-only"
    assert regression.before_tps == pytest.approx(np.mean(BEFORE))
    assert regression.after_tps == pytest.approx(np.mean(AFTER))
    assert (regression.before_runs, regression.after_runs) == (8, 6)
    expected = np.mean(AFTER) / np.mean(BEFORE) - 1
    assert regression.change == pytest.approx(expected)
    low, high = regression.change_low, regression.change_high
    assert low is not None and high is not None
    assert low < expected < high and high - low < 0.03
    assert regression.p_value < 1e-4


def test_it_stores_a_change_once_however_often_it_runs(agent):
    runs = history(agent, BEFORE + AFTER)
    assert run_detect(run_id=runs[-1].pk) == 1
    assert run_detect(run_id=runs[-1].pk) == 0
    assert run_detect(run_id=runs[3].pk) == 0
    assert Regression.objects.count() == 1


def test_it_refines_a_new_change_but_keeps_a_triaged_one_as_it_was(agent, alice):
    runs = history(agent, BEFORE + AFTER[:3])
    run_detect(run_id=runs[-1].pk)
    regression = Regression.objects.get()
    assert regression.after_runs == 3
    more = [
        upload(agent, version=f"14.{i}", tps={4: [v]}, started_at=f"2026-10-{i:02d}T10:00:00Z")
        for i, v in zip(range(12, 15), AFTER[3:], strict=True)
    ]
    run_detect(run_id=more[-1].pk)
    regression.refresh_from_db()
    assert regression.after_runs == 6
    assert regression.after_tps == pytest.approx(np.mean(AFTER))

    regression_state_change(regression=regression, state="acknowledged", actor=alice)
    upload(agent, version="14.15", tps={4: [AFTER[0]]}, started_at="2026-10-15T10:00:00Z")
    series_detect(
        comparability_key=regression.comparability_key, clients=4, host_id=regression.host_id
    )
    regression.refresh_from_db()
    assert regression.after_runs == 6 and regression.state == "acknowledged"
    assert Regression.objects.count() == 1


def test_it_finds_a_step_up_as_an_improvement(agent):
    runs = history(agent, noisy(800.0, 7, seed=3) + noisy(900.0, 7, seed=4))
    run_detect(run_id=runs[-1].pk)
    improvement = Regression.objects.get()
    assert improvement.kind == "improvement" and improvement.run_after == runs[7]
    assert improvement.change > 0.1


def test_it_finds_nothing_in_a_flat_series(agent):
    runs = history(agent, noisy(1000.0, 16, seed=5))
    assert run_detect(run_id=runs[-1].pk) == 0
    assert not Regression.objects.exists()


def test_it_leaves_runs_marked_invalid_out_of_the_series(agent, alice):
    runs = history(agent, BEFORE + AFTER)
    for run in runs[8:]:
        run_mark(run=run, invalid=True, actor=alice, reason="the disk was full")
    assert run_detect(run_id=runs[-1].pk) == 0
    assert not Regression.objects.exists()


def test_it_starts_detection_at_the_baseline_mark(agent, alice):
    values = noisy(1200.0, 7, seed=7) + noisy(1000.0, 7, seed=8) + noisy(800.0, 7, seed=9)
    runs = history(agent, values)
    run_detect(run_id=runs[-1].pk)
    found = sorted(Regression.objects.values_list("run_after_id", flat=True))
    assert found == [runs[7].pk, runs[14].pk]
    Regression.objects.all().delete()

    run_mark(run=runs[7], baseline=True, actor=alice)
    run_detect(run_id=runs[-1].pk)
    regression = Regression.objects.get()
    assert regression.run_after == runs[14] and regression.baseline_run == runs[7]
    assert regression.before_runs == 7
    assert regression.before_tps == pytest.approx(np.mean(values[7:14]))


def test_it_gives_no_interval_when_a_side_has_a_single_run():
    assert change_interval([1000.0, 1001.0, 999.0], [800.0]) == (None, None)
    low, high = change_interval([1000.0, 1001.0, 999.0], [800.0, 802.0])
    assert low is not None and high is not None and low < 801 / 1000 - 1 < high


def test_it_backfills_every_series_of_an_existing_history_once(agent):
    history(agent, BEFORE + AFTER)
    out = StringIO()
    call_command("regressions_detect", stdout=out)
    assert out.getvalue().strip() == "1 series read, 1 new changes stored"
    call_command("regressions_detect", stdout=out)
    assert out.getvalue().strip().endswith("1 series read, 0 new changes stored")
    assert Regression.objects.count() == 1


def test_it_queues_detection_when_aggregates_or_marks_commit(
    agent, alice, monkeypatch, django_capture_on_commit_callbacks
):
    queued: list[int] = []
    monkeypatch.setattr(detect_run, "apply_async", lambda *, args: queued.append(args[0]))
    [run] = history(agent, [1000.0])
    with django_capture_on_commit_callbacks(execute=True):
        run_aggregate(run_id=run.pk)
    assert queued == [run.pk]
    with django_capture_on_commit_callbacks(execute=True):
        run_mark(run=run, baseline=True, actor=alice)
        run_mark(run=run, baseline=True, actor=alice)  # no change: nothing to detect again
    assert queued == [run.pk, run.pk]


def test_it_moves_an_untriaged_change_found_again_a_run_away_instead_of_storing_another(agent):
    runs = history(agent, BEFORE + AFTER)
    # Stored by an earlier detection one run late, as the first runs after a step can place it.
    early = regression_stored(runs[8], runs[9], before_runs=9)
    assert run_detect(run_id=runs[-1].pk) == 0
    moved = Regression.objects.get()
    assert moved.pk == early.pk
    assert (moved.run_before, moved.run_after) == (runs[7], runs[8])
    assert (moved.before_runs, moved.after_runs) == (8, 6)


def test_it_leaves_a_triaged_change_where_the_person_saw_it(agent):
    runs = history(agent, BEFORE + AFTER)
    early = regression_stored(runs[8], runs[9], before_runs=9, state="acknowledged")
    assert run_detect(run_id=runs[-1].pk) == 1
    early.refresh_from_db()
    assert early.run_after == runs[9] and early.state == "acknowledged"
    assert Regression.objects.get(state="new").run_after == runs[8]
