"""The migrations that make the notice what is delivered: each change told before becomes a
notice of its own, its deliveries that notice's, and it is never told again."""

import itertools

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from benchhub.compare.tests.uploads import upload
from benchhub.regressions.models import Delivery, Regression
from benchhub.regressions.notifications import regression_notify

BEFORE = [("regressions", "0005_regression_detections")]
AFTER = [("regressions", "0008_delivery_by_notice")]


@pytest.mark.django_db(transaction=True)
def test_it_makes_each_change_told_before_a_notice_of_its_own(agent, alice, bob):
    executor = MigrationExecutor(connection)
    try:
        told, untold = _told_before(executor, agent, alice, bob)
        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())

    regression = Regression.objects.get(pk=told)
    assert regression.notice is not None and regression.confirmed_at is None
    deliveries = Delivery.objects.filter(notice=regression.notice).order_by("channel")
    assert [(d.channel, d.recipient) for d in deliveries] == [
        ("email", "alice@example.com"),
        ("email", "bob@example.com"),
    ]
    assert Regression.objects.get(pk=untold).notice is None
    assert regression_notify(regression_id=told) == 0  # told already
    assert regression_notify(regression_id=untold) == 0  # counts as told: never confirmed


def _told_before(executor, agent, alice, bob) -> tuple[int, int]:
    """Under 0005: two changes, the first sent by email to alice and bob."""
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    old_regression = apps.get_model("regressions", "Regression")
    old_delivery = apps.get_model("regressions", "Delivery")
    runs = [
        upload(agent, version=f"14.{i}", tps={4: [1000.0]}, started_at=f"2026-10-0{i}T10:00:00Z")
        for i in (1, 2, 3)
    ]
    ids = []
    for before, after in itertools.pairwise(runs):
        ids.append(
            old_regression.objects.create(
                kind="regression",
                comparability_key=after.comparability_key,
                clients=4,
                host_id=after.host_id,
                workload_id=after.workload_id,
                run_before_id=before.pk,
                run_after_id=after.pk,
                before_tps=1000.0,
                after_tps=800.0,
                before_runs=1,
                after_runs=1,
                change=-0.2,
                p_value=1e-9,
                detections=3,
            ).pk
        )
    for person, address in ((alice, "alice@example.com"), (bob, "bob@example.com")):
        old_delivery.objects.create(
            regression_id=ids[0], user_id=person.pk, channel="email", recipient=address
        )
    return ids[0], ids[1]
