"""Celery tasks for regressions: take ids, call one service, retry in the task."""

from celery import shared_task

from benchhub.regressions.notifications import DeliveryFailed, delivery_attempt, regression_notify
from benchhub.regressions.services import run_detect

DELIVERY_RETRIES = 5


@shared_task(
    name="regressions.detect_run",
    max_retries=3,
    autoretry_for=(Exception,),
    retry_backoff=2,
    retry_backoff_max=60,
)
def detect_run(run_id: int) -> int:
    return run_detect(run_id=run_id)


@shared_task(
    name="regressions.notify",
    max_retries=3,
    autoretry_for=(Exception,),
    retry_backoff=2,
    retry_backoff_max=60,
)
def notify(regression_id: int) -> int:
    """The notice of a confirmed change's alert: every change of its group due by now."""
    return regression_notify(regression_id=regression_id)


@shared_task(
    name="regressions.deliver",
    bind=True,
    max_retries=DELIVERY_RETRIES,
    retry_backoff_max=600,
)
def deliver(self, delivery_id: int) -> None:
    """One attempt; a failure worth retrying is retried after 2, 4, 8, ... seconds (with jitter),
    and recorded as failed on the last attempt."""
    last = self.request.retries >= DELIVERY_RETRIES
    try:
        delivery_attempt(delivery_id=delivery_id, last=last)
    except DeliveryFailed as exc:
        if last:
            return
        raise self.retry(exc=exc, countdown=2 ** (self.request.retries + 1)) from exc
