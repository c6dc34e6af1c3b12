"""The Celery application: background analysis and periodic sweeps, brokered by Redis."""

import os
from logging.config import dictConfig
from typing import Any

from celery import Celery
from celery.signals import setup_logging

from benchhub.monitoring.heartbeat import WorkerSeen

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchhub.settings")

app = Celery("benchhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Each worker records, for every queue it consumes, that it is alive (benchhub_celery_worker_*).
app.steps["consumer"].add(WorkerSeen)


def logging_from_settings(**kwargs: Any) -> None:
    """Workers and beat log as the web server does (settings.LOGGING)."""
    from django.conf import settings

    dictConfig(settings.LOGGING)


# Only for JSON: a receiver of this signal replaces Celery's own logging set-up altogether, and
# its plain format (with the worker's process name) is the better one to read in a terminal.
if os.environ.get("LOG_FORMAT") == "json":
    setup_logging.connect(logging_from_settings, weak=False)
