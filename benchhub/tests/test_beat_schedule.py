"""Every periodic task beat sends names a task the worker has: a misspelt name would be sent
every interval and never run (the lease sweep, the aggregation sweep, the bisection sweep)."""

from django.conf import settings

from benchhub.celery import app


def test_every_periodic_task_is_registered():
    app.loader.import_default_modules()
    names = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {"jobs.expire_leases", "bisections.advance_idle"} <= names
    assert names <= set(app.tasks), names - set(app.tasks)
