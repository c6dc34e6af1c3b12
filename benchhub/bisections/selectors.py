"""Reads of bisections for the API and the pages (fixed query counts)."""

from django.db.models import Prefetch, QuerySet

from benchhub.bisections.models import Bisection, BisectionCommit
from benchhub.jobs.models import Job
from benchhub.results.models import Run


def bisection_list() -> QuerySet[Bisection]:
    """Newest first, with recipe, host, creator and the runs it started from (paginate:
    unbounded)."""
    return Bisection.objects.select_related(
        "recipe", "host", "created_by", "good_run__build", "bad_run__build", "regression"
    ).order_by("-created_at", "-id")


def bisection_get(*, bisection_id: int) -> Bisection | None:
    """One bisection with its commits (by position) and its jobs (oldest first, with their
    runs and builds), in four queries."""
    return (
        bisection_list()
        .prefetch_related(
            Prefetch("commits", queryset=BisectionCommit.objects.order_by("position")),
            Prefetch("jobs", queryset=Job.objects.order_by("created_at", "id")),
            Prefetch("jobs__runs", queryset=Run.objects.select_related("build")),
        )
        .filter(pk=bisection_id)
        .first()
    )
