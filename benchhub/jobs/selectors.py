"""Reads for the queue."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Case, Count, Min, Prefetch, Q, QuerySet, When

from benchhub.hosts.models import host_name_key
from benchhub.hosts.selectors import HostPresence, host_presence_list
from benchhub.jobs.models import Job, JobSchedule
from benchhub.results.models import Run

JOB_RELATIONS = ("host", "claimed_host", "created_by")
MAX_ACTIVE = 100
MAX_PENDING_SHOWN = 5


def _jobs() -> QuerySet[Job]:
    return Job.objects.select_related(*JOB_RELATIONS).prefetch_related(
        Prefetch(
            "runs",
            queryset=Run.objects.select_related("build")
            .only("uuid", "job_id", "job_attempt", "build__version")
            .order_by("id"),
        )
    )


def job_list(*, state: str | None = None) -> QuerySet[Job]:
    """Jobs without their build specs (patch texts can be large; lists never show them)."""
    jobs = _jobs().defer("builds")
    return jobs.filter(state=state) if state else jobs


def job_get(*, job_id: int) -> Job | None:
    return _jobs().prefetch_related("events").filter(pk=job_id).first()


def job_state_counts() -> dict[str, int]:
    """How many jobs are in each state, every state present (0 when none), in lifecycle order."""
    counts = dict(Job.objects.order_by().values_list("state").annotate(n=Count("id")))
    return {state: counts.get(state, 0) for state in Job.State.values}


def job_active_list() -> QuerySet[Job]:
    """Jobs an agent holds (claimed or running), longest-held first; bounded."""
    return job_list().filter(state__in=Job.ACTIVE).order_by("claimed_at", "id")[:MAX_ACTIVE]


def job_pending_for(*, workload: str, host: str | None, versions: list[str]) -> list[Job]:
    """Queued or held jobs that will measure any of `versions` of `workload` on `host` (or on
    whichever host claims them, when they name none); newest first, at most MAX_PENDING_SHOWN.
    Where a comparison finds no run of a version yet, these say it is coming."""
    jobs = job_list().filter(
        state__in=(Job.State.QUEUED, *Job.ACTIVE),
        workload__name=workload,
        versions__overlap=versions,
    )
    if host:
        unplaced = Q(host__isnull=True, claimed_host__isnull=True)
        key = host_name_key(host)
        jobs = jobs.filter(Q(host__name_key=key) | Q(claimed_host__name_key=key) | unplaced)
    return list(jobs.order_by("-id")[:MAX_PENDING_SHOWN])


def job_pending_list(*, catalog_entries: tuple[str, ...] = ()) -> list[Job]:
    """Queued or held jobs, held ones first, then the newest; with `catalog_entries`, only jobs
    of workloads made from those catalog entries (an experiment's). At most MAX_PENDING_SHOWN:
    where a page has no result yet, these say which job will bring one."""
    jobs = job_list().filter(state__in=(Job.State.QUEUED, *Job.ACTIVE))
    if catalog_entries:
        jobs = jobs.filter(workload__catalog_entry__in=list(catalog_entries))
    held = Case(When(state__in=Job.ACTIVE, then=0), default=1)
    return list(jobs.order_by(held, "-id")[:MAX_PENDING_SHOWN])


def job_ended_among(
    *, job_ids: list[int], catalog_entries: tuple[str, ...] = (), workload: str | None = None
) -> list[Job]:
    """Of `job_ids` (jobs a page listed as queued or running), those that have ended since, of
    workloads made from `catalog_entries` (an experiment's) and, given `workload`, of the
    workload of that name (a comparison's); newest first, at most MAX_PENDING_SHOWN. A page
    that follows its jobs says how each ended rather than dropping it."""
    jobs = job_list().filter(pk__in=job_ids[: 4 * MAX_PENDING_SHOWN], state__in=Job.FINAL)
    if catalog_entries:
        jobs = jobs.filter(workload__catalog_entry__in=list(catalog_entries))
    if workload is not None:
        jobs = jobs.filter(workload__name=workload)
    return list(jobs.order_by("-id")[:MAX_PENDING_SHOWN])


def job_expected_end(*, job: Job, now: datetime) -> datetime | None:
    """When a running job should end if its remaining steps (the agent's progress: `step` of
    `steps` measurements) take as long as the ones done since it started running. None until a
    step is done, and for a job that is not running: a guess from nothing would mislead."""
    progress = job.progress if isinstance(job.progress, dict) else {}
    step, steps = progress.get("step"), progress.get("steps")
    if job.state != Job.State.RUNNING or job.started_at is None:
        return None
    if not isinstance(step, int) or not isinstance(steps, int) or not 0 < step <= steps:
        return None
    elapsed = max(now - job.started_at, timedelta(0))
    return now + elapsed * (steps - step) / step


@dataclass(frozen=True)
class QueueStatus:
    """What the home page shows live: counts per state, the held jobs, who is online."""

    queue: dict[str, int]
    active: list[Job]
    hosts: list[HostPresence]


def queue_status() -> QueueStatus:
    return QueueStatus(
        queue=job_state_counts(), active=list(job_active_list()), hosts=host_presence_list()
    )


MAX_CLAIM_WAITS = 10_000


def job_oldest_queued_at() -> datetime | None:
    """When the longest-waiting queued job was created; None when no job is queued."""
    return Job.objects.filter(state=Job.State.QUEUED).aggregate(oldest=Min("created_at"))["oldest"]


def job_claim_waits(*, since: datetime) -> list[float]:
    """Seconds from creation to claim of the jobs claimed since `since` (at most 10,000, the
    latest), whatever their state now."""
    pairs = (
        Job.objects.filter(claimed_at__gte=since)
        .order_by("-claimed_at")
        .values_list("created_at", "claimed_at")[:MAX_CLAIM_WAITS]
    )
    return [
        max((claimed - created).total_seconds(), 0.0)
        for created, claimed in pairs
        if claimed is not None
    ]


SCHEDULE_LIST_MAX = 500
SCHEDULE_JOBS_SHOWN = 5


@dataclass(frozen=True)
class ScheduleRow:
    """A schedule as its page shows it: when beat fires it next (None while paused) and its
    latest jobs, newest first, with their runs."""

    schedule: JobSchedule
    next_run_at: datetime | None
    jobs: list[Job]


def schedule_next_run(*, schedule: JobSchedule, now: datetime) -> datetime | None:
    """The next time after `now` beat fires `schedule` (its crontab, in UTC); None when paused
    or when it has no beat entry."""
    task = schedule.periodic_task
    if not schedule.enabled or task is None or task.crontab is None:
        return None
    cron = task.crontab.schedule
    # remaining_estimate counts from celery's clock: give it ours so the answer is for `now`.
    cron.nowfun = lambda: now
    return now + cron.remaining_estimate(now)


def _schedules() -> QuerySet[JobSchedule]:
    # A sliced prefetch takes the newest few of each schedule in one query (a window function).
    latest = job_list().order_by("-created_at", "-id")[:SCHEDULE_JOBS_SHOWN]
    return JobSchedule.objects.select_related(
        "created_by", "periodic_task__crontab"
    ).prefetch_related(Prefetch("jobs", queryset=latest, to_attr="latest_jobs"))


def schedule_list(*, now: datetime) -> list[ScheduleRow]:
    """Schedules by name (at most SCHEDULE_LIST_MAX), each with its next run and latest jobs;
    a fixed number of queries whatever their count."""
    return [_row(s, now) for s in _schedules().order_by("name")[:SCHEDULE_LIST_MAX]]


def schedule_get(*, schedule_id: int, now: datetime) -> ScheduleRow | None:
    schedule = _schedules().filter(pk=schedule_id).first()
    return _row(schedule, now) if schedule else None


def _row(schedule: JobSchedule, now: datetime) -> ScheduleRow:
    return ScheduleRow(
        schedule=schedule,
        next_run_at=schedule_next_run(schedule=schedule, now=now),
        jobs=list(getattr(schedule, "latest_jobs", [])),
    )
