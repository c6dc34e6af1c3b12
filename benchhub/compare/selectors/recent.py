"""The comparisons just measured: one per recent finished job of two or more versions, as the
Compare page shows it (the same selection, so its verdicts are the page's).

Queries: one for the jobs, then comparison_get's and the assessment's for each comparison.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from benchhub.compare.selectors.comparisons import Comparison, ComparisonError, comparison_get
from benchhub.jobs.models import Job

if TYPE_CHECKING:
    from benchhub.compare.assessment import Assessment

# Done jobs looked at for the newest distinct comparisons: many settle jobs repeat one pair.
JOBS_SCANNED = 50


@dataclass(frozen=True)
class RecentComparison:
    """A job's versions of its workload on its host, compared as the Compare page would
    (the first version the baseline), with the job that measured them last."""

    job: Job
    workload: str
    host: str
    versions: list[str]
    comparison: Comparison
    assessment: Assessment


def comparison_recent(*, limit: int) -> list[RecentComparison]:
    """The newest `limit` distinct comparisons (workload, host, versions) of finished jobs
    with two or more versions, newest first; those whose runs are no longer there are left
    out."""
    from benchhub.compare.assessment import comparison_assess

    found: list[RecentComparison] = []
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    for job in _recent_jobs():
        versions = list(dict.fromkeys(job.versions))
        host = job.claimed_host.name if job.claimed_host else ""
        selection = (job.workload.get("name", ""), host, tuple(versions))
        if len(versions) < 2 or not selection[0] or not host or selection in seen:
            continue
        seen.add(selection)
        try:
            comparison = comparison_get(workload=selection[0], host=selection[1], versions=versions)
        except ComparisonError:
            continue
        if len(comparison.series) < 2:
            continue
        assessment = comparison_assess(comparison)
        found.append(
            RecentComparison(job, selection[0], selection[1], versions, comparison, assessment)
        )
        if len(found) == limit:
            break
    return found


def _recent_jobs() -> list[Job]:
    return list(
        Job.objects.filter(state=Job.State.DONE, claimed_host__isnull=False)
        .select_related("claimed_host")
        .only("id", "versions", "workload", "finished_at", "claimed_host__name")
        .order_by("-finished_at", "-id")[:JOBS_SCANNED]
    )
