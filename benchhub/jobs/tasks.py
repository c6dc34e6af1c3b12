"""Celery tasks for the queue: lease expiry (beat, every few seconds) and scheduled jobs."""

import logging

from celery import shared_task

from benchhub.errors import ApplicationError
from benchhub.jobs.services import jobs_expire_leases, schedule_fire

logger = logging.getLogger(__name__)


@shared_task(name="jobs.expire_leases")
def expire_leases() -> int:
    return jobs_expire_leases()


@shared_task(name="jobs.schedule_fire")
def fire_schedule(schedule_id: int) -> int | None:
    # A schedule whose template no longer passes (host gone, right withdrawn) fails this firing
    # only: logged, and the next firing tries again.
    try:
        job = schedule_fire(schedule_id=schedule_id)
    except ApplicationError as exc:
        logger.warning("schedule %s did not fire: %s", schedule_id, exc.detail)
        return None
    return job.pk if job else None
