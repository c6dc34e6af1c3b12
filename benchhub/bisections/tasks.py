"""Celery tasks for bisections: thin wrappers that take ids and call one service."""

from celery import shared_task

from benchhub.bisections.services import bisection_advance, bisections_advance_idle


@shared_task(
    name="bisections.advance",
    max_retries=5,
    autoretry_for=(Exception,),
    retry_backoff=2,
    retry_backoff_max=60,
)
def advance(bisection_id: int) -> str:
    bisection = bisection_advance(bisection_id=bisection_id)
    return bisection.state if bisection is not None else "gone"


@shared_task(name="bisections.advance_idle")
def advance_idle() -> int:
    """Advance open bisections with no job on the way (an advance lost with the broker)."""
    return bisections_advance_idle()
