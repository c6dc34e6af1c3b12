"""Celery tasks for results: thin wrappers that take ids and call one service."""

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from benchhub.results.models import Run
from benchhub.results.partitions import partitions_ensure, retention_apply
from benchhub.results.services import run_aggregate

# Runs younger than this still have their own task on the way; the sweep leaves them to it.
SWEEP_GRACE = timedelta(seconds=30)
SWEEP_BATCH = 200


@shared_task(
    name="results.aggregate_run",
    max_retries=5,
    autoretry_for=(Exception,),
    retry_backoff=2,
    retry_backoff_max=60,
)
def aggregate_run(run_id: int) -> int:
    if not Run.objects.filter(pk=run_id).exists():
        return 0
    return run_aggregate(run_id=run_id)


@shared_task(name="results.aggregate_pending")
def aggregate_pending() -> int:
    """Aggregate runs whose task never ran (the broker was down at upload time)."""
    cutoff = timezone.now() - SWEEP_GRACE
    ids = list(
        Run.objects.filter(aggregated_at__isnull=True, created_at__lt=cutoff)
        .order_by("created_at")
        .values_list("pk", flat=True)[:SWEEP_BATCH]
    )
    for run_id in ids:
        run_aggregate(run_id=run_id)
    return len(ids)


@shared_task(name="results.partitions_maintain")
def partitions_maintain() -> int:
    """Create the detail tables' partitions of the coming months and, when the setting asks for
    it, drop the months past retention; returns how many months were dropped."""
    partitions_ensure()
    keep = settings.BENCHHUB_KEEP_DETAIL_MONTHS
    return 0 if keep is None else len(retention_apply(keep_months=keep))
