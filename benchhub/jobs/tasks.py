"""Celery tasks for the queue: lease expiry (beat, every few seconds) and scheduled jobs."""

from celery import shared_task

from benchhub.jobs.services import jobs_expire_leases, schedule_fire


@shared_task(name="jobs.expire_leases")
def expire_leases() -> int:
    return jobs_expire_leases()


@shared_task(name="jobs.schedule_fire")
def fire_schedule(schedule_id: int) -> int | None:
    job = schedule_fire(schedule_id=schedule_id)
    return job.pk if job else None
