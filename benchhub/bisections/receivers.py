"""A bisection takes its next step when the apps below it announce that one of its jobs ended
(jobs.signals.job_ended) or that a run of one of its jobs was aggregated
(results.hooks.run_aggregated: its verdicts read the steady-state means, which exist from then
on). Connected in BisectionsConfig.ready(); each answer queues bisection_advance, which is
idempotent."""

from typing import Any

from django.dispatch import receiver

from benchhub.bisections.services import bisection_advance_enqueue
from benchhub.jobs.models import Job
from benchhub.jobs.signals import job_ended
from benchhub.results.hooks import run_aggregated


@receiver(job_ended, dispatch_uid="bisections.job_ended")
def on_job_ended(*, bisection_id: int | None, **_: Any) -> None:
    if bisection_id is not None:
        bisection_advance_enqueue(bisection_id=bisection_id)


@receiver(run_aggregated, dispatch_uid="bisections.run_aggregated")
def on_run_aggregated(*, job_id: int | None, **_: Any) -> None:
    if job_id is None:
        return
    bisection_id = Job.objects.filter(pk=job_id).values_list("bisection_id", flat=True).first()
    if bisection_id is not None:
        bisection_advance_enqueue(bisection_id=bisection_id)
