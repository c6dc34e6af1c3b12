"""Celery beat's scheduler for BenchHub: django-celery-beat's DatabaseScheduler that survives a
bad row.

The stock scheduler builds every enabled periodic task on each refresh and skips only a
ValueError; a crontab that celery's parser refuses raises its ParseException instead, and beat
exits — at every restart, until someone deletes the row by hand. Crontabs are validated where
they come in (jobs.serializers.crontab_check), but rows that predate that check, or that were
written by hand, must still cost only their own schedule: each is built on its own, and one that
fails is logged and left out.
"""

import logging
from typing import Any

from django_celery_beat.schedulers import DatabaseScheduler

logger = logging.getLogger(__name__)


class SafeDatabaseScheduler(DatabaseScheduler):
    def all_as_schedule(self) -> dict[str, Any]:
        entries = {}
        for model in self.enabled_models():
            try:
                entries[model.name] = self.Entry(model, app=self.app)
            except Exception:  # any bad row: log it, keep beat and every other schedule going
                logger.exception("periodic task %r skipped: its schedule is invalid", model.name)
        return entries
