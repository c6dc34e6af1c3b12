"""Changes stored before detection split a series where its runs stop being like with like are
re-examined under the current rule: one whose runs before and after lie either side of a split
is withdrawn (marked, with the reason, never deleted), by `manage.py regressions_reexamine`, by
the next detection of its series, and through the Celery task the upgrade's migration queues.
Real uploads, real PostgreSQL (and a real worker for the migration's path)."""

import importlib
import io
import time

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import transaction

from benchhub.regressions.models import Regression, RegressionEvent
from benchhub.regressions.services import run_detect
from benchhub.regressions.tests.series import regression_stored
from benchhub.regressions.tests.test_splits import BEFORE, HISTORY, _series
from benchhub.results.models import Run

KERNEL = {"kernel": "6.8.0-40-generic"}
REASON = "from 2026-10-09 10:00: kernel 6.8.0-40-generic (not 6.1.0-26-amd64)"


def _stored(before: Run, after: Run, *, state: str = "new") -> Regression:
    """A change as the detector before splits stored it."""
    return regression_stored(before, after, before_runs=len(BEFORE), state=state)


def _reexamine() -> str:
    out = io.StringIO()
    call_command("regressions_reexamine", stdout=out)
    return out.getvalue()


def test_it_withdraws_a_stored_change_across_a_split_with_the_reason(agent, client):
    runs = _series(agent, KERNEL)
    spanning = _stored(runs[len(BEFORE) - 1], runs[len(BEFORE)], state="acknowledged")
    inside = _stored(runs[2], runs[3])  # both runs on the old kernel: no split between them
    assert f"/regressions/{spanning.pk}/" in client.get(HISTORY).content.decode()

    assert _reexamine() == "1 series re-examined, 1 changes withdrawn\n"
    spanning.refresh_from_db()
    assert spanning.state == "withdrawn" and spanning.state_changed_by is None
    assert REASON in spanning.note and "No change is called across a split" in spanning.note
    event = RegressionEvent.objects.get(regression=spanning)
    assert (event.from_state, event.to_state, event.actor) == ("acknowledged", "withdrawn", None)
    assert event.note == spanning.note
    inside.refresh_from_db()
    assert inside.state == "new" and not RegressionEvent.objects.filter(regression=inside)

    # Idempotent: withdrawn once, logged once; the change stays listed, with its state.
    assert _reexamine() == "1 series re-examined, 0 changes withdrawn\n"
    assert RegressionEvent.objects.filter(regression=spanning).count() == 1
    listed = client.get("/api/v1/regressions/?state=withdrawn").json()["results"]
    assert [r["id"] for r in listed] == [spanning.pk]
    detail = client.get(f"/api/v1/regressions/{spanning.pk}/").json()
    assert detail["events"][0]["to_state"] == "withdrawn" and REASON in detail["note"]
    # History draws no change across the split it marks.
    page = client.get(HISTORY).content.decode()
    assert f"/regressions/{spanning.pk}/" not in page and f"/regressions/{inside.pk}/" in page


def test_the_next_detection_of_the_series_withdraws_it_too(agent):
    runs = _series(agent, KERNEL)
    spanning = _stored(runs[len(BEFORE) - 1], runs[len(BEFORE)])
    assert run_detect(run_id=runs[-1].pk) == 0
    spanning.refresh_from_db()
    assert spanning.state == "withdrawn" and REASON in spanning.note


def test_a_change_in_a_series_without_a_split_stays(agent):
    runs = _series(agent, {})
    assert run_detect(run_id=runs[-1].pk) == 1
    found = Regression.objects.get()
    assert _reexamine() == "1 series re-examined, 0 changes withdrawn\n"
    found.refresh_from_db()
    assert found.state == "new"


@pytest.mark.django_db(transaction=True)
def test_the_upgrade_migration_queues_the_reexamination_through_the_worker(agent, request):
    runs = _series(agent, KERNEL)
    spanning = _stored(runs[len(BEFORE) - 1], runs[len(BEFORE)])
    request.getfixturevalue("analysis_worker")
    migration = importlib.import_module(
        "benchhub.regressions.migrations.0003_regressions_reexamined"
    )
    with transaction.atomic():
        migration.queue_reexamination(apps, None)
    deadline = time.monotonic() + 60
    while Regression.objects.get(pk=spanning.pk).state != "withdrawn":
        assert time.monotonic() < deadline, "the worker did not withdraw the change"
        time.sleep(0.2)
    assert REASON in Regression.objects.get(pk=spanning.pk).note
