"""What the results app announces to the apps above it, and the one thing it asks of them, so
that it never imports them.

- `run_aggregated` (a Django signal, used only for this decoupling) is sent once a run's
  aggregation has committed, with `run_id` and `job_id` (None for a run of no job). Change
  detection (regressions) and a bisection's next step (bisections) subscribe in their
  AppConfig.ready().
- An upload that names a job is checked by the queue (the jobs app registers `job_check` at
  start-up) inside the upload's transaction, so a lease expiry cannot interleave. With no check
  registered, such an upload is refused rather than stored unchecked.
"""

from typing import Protocol

from django.core.exceptions import ImproperlyConfigured
from django.dispatch import Signal

from benchhub.hosts.models import RunnerToken

run_aggregated = Signal()


class JobCheck(Protocol):
    def __call__(self, *, job_id: int, attempt: int, token: RunnerToken | None) -> object: ...


_job_checks: list[JobCheck] = []


def job_check_register(check: JobCheck) -> None:
    """Check every upload that names a job with `check`, which raises its refusal."""
    if check not in _job_checks:
        _job_checks.append(check)


def job_check(*, job_id: int, attempt: int, token: RunnerToken | None) -> None:
    """Raise the refusal of an upload for attempt `attempt` of job `job_id` by `token`'s agent
    (the registered checks'); returns when it may be stored."""
    if not _job_checks:
        raise ImproperlyConfigured("No app checks uploads of jobs' runs: install benchhub.jobs.")
    for check in _job_checks:
        check(job_id=job_id, attempt=attempt, token=token)
