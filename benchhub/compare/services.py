"""Writes from a comparison: "settle it" queues more runs or repeats of its inconclusive levels."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from benchhub.compare.assessment import comparison_assess, settle_plan
from benchhub.compare.selectors.comparisons import Comparison
from benchhub.errors import ApplicationError
from benchhub.jobs.models import Job
from benchhub.jobs.services import job_create_more


class SettleError(ApplicationError):
    """Nothing to settle: every level of the comparison already has a verdict."""

    status = 409


def comparison_settle(
    *, comparison: Comparison, threshold: float, created_by: Any, permalink: str = ""
) -> list[Job]:
    """Queue more measurements of the comparison's levels that are inconclusive (after Holm) at
    `threshold`: the baseline's and those versions' builds, on the baseline run's host with its
    workload, length and configuration (jobs.services.job_create_more). Where a level's interval
    has one run a side, several separate jobs (their runs are the units that narrow it), else
    one job with more repeats (assessment.settle_plan). When their runs are uploaded and
    aggregated, they pool into the same comparison (same build, same comparability key), and
    its verdicts update. Returns the jobs, queued in one transaction.

    Raises SettleError `nothing_to_settle` (409) when no level is inconclusive, and JobError
    `invalid` (400) when the runs cannot be measured again.
    """
    assessment = comparison_assess(comparison, threshold=threshold)
    plan = settle_plan(comparison, assessment)
    if plan is None:
        raise SettleError(
            "nothing_to_settle", "No level of this comparison is inconclusive: nothing to settle."
        )
    levels = ", ".join(str(c) for c in plan.clients)
    with transaction.atomic():
        return [
            job_create_more(
                runs=plan.runs,
                clients=plan.clients,
                repeats=plan.repeats,
                aa=plan.aa,
                created_by=created_by,
                reason=f"settle it: clients {levels} of /compare/?{permalink}",
            )
            for _ in range(plan.jobs)
        ]
