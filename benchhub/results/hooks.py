"""What the results app announces to the apps above it, and the one thing it asks of them, so
that it never imports them.

- `run_aggregated` (a Django signal, used only for this decoupling) is sent once a run's
  aggregation has committed, with `run_id` and `job_id` (None for a run of no job). Change
  detection (regressions) and a bisection's next step (bisections) subscribe in their
  AppConfig.ready().
- An upload that names a job is checked by the queue (the jobs app registers `job_check` at
  start-up) inside the upload's transaction, so a lease expiry cannot interleave. With no check
  registered, such an upload is refused rather than stored unchecked.
- Runs are tagged in review: a read that narrows runs to those carrying some tags (the runs
  API's, the run list's, a comparison's, a history's `?tag=`) asks the filter the review app
  registers at start-up (`run_tag_filter_register`) through `runs_tagged`.
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from django.core.exceptions import ImproperlyConfigured
from django.db.models import QuerySet
from django.dispatch import Signal

from benchhub.hosts.models import RunnerToken

if TYPE_CHECKING:
    from benchhub.results.models import Run

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


class RunTagFilter(Protocol):
    def __call__(self, runs: "QuerySet[Run]", *, tags: Sequence[str]) -> "QuerySet[Run]": ...


_tag_filters: list[RunTagFilter] = []


def run_tag_filter_register(tag_filter: RunTagFilter) -> None:
    """Narrow runs by their tags with `tag_filter` (the review app's, which holds the tags)."""
    if tag_filter not in _tag_filters:
        _tag_filters.append(tag_filter)


def runs_tagged(runs: "QuerySet[Run]", *, tags: Sequence[str]) -> "QuerySet[Run]":
    """`runs` narrowed to those carrying every one of `tags`; no tags: `runs` as they are. Still
    a query set (the filter adds conditions, it reads nothing)."""
    if not tags:
        return runs
    if not _tag_filters:
        raise ImproperlyConfigured("No app filters runs by tag: install benchhub.review.")
    for tag_filter in _tag_filters:
        runs = tag_filter(runs, tags=tags)
    return runs
