"""Writes for the queue: create, claim, heartbeat, finish, cancel, expire; schedules.

Every state change locks the job row (`SELECT ... FOR UPDATE`) and records a JobEvent in the same
transaction. Claims use `FOR UPDATE SKIP LOCKED`, so concurrent agents never wait on each other
and never receive the same job.
"""

import functools
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from benchhub_runner.jobspec.plan import PLAN_FIELDS
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from benchhub.api.errors import flatten_errors
from benchhub.builds.selectors import build_specs_pinned, recipe_specs
from benchhub.builds.specs import BuildSpecError
from benchhub.builds.versions import VersionError, version_parse
from benchhub.errors import ApplicationError
from benchhub.hosts.access import job_target_check
from benchhub.hosts.models import Host, RunnerToken, host_name_key
from benchhub.jobs.models import Job, JobEvent, JobSchedule
from benchhub.jobs.serializers import JobInSerializer
from benchhub.jobs.signals import job_ended
from benchhub.results.models import Run
from benchhub.workloads.services import BASE_FIELDS, OPTIONAL_DEFAULTS, workload_definition

logger = logging.getLogger(__name__)


class JobError(ApplicationError):
    """A request that does not fit the job's state; the detail says why. Codes: `job_state`;
    `lease_lost`, the job is no longer this agent's (its lease lapsed and it was queued again or
    expired); `stale_job`, an upload for an attempt that is no longer live."""

    status = 409


@dataclass(frozen=True)
class HeartbeatReply:
    cancel: bool
    lease_expires_at: datetime | None


def _lease_end() -> datetime:
    return timezone.now() + timedelta(seconds=settings.BENCHHUB_JOB_LEASE_S)


def _event(job: Job, kind: str, actor: str, message: str = "") -> None:
    JobEvent.objects.create(job=job, kind=kind, attempt=job.attempt, actor=actor, message=message)


def _runner(token: RunnerToken) -> str:
    return f"runner {token.name} ({token.host.name})"


def _person(user: Any) -> User | None:
    """The person behind a request (None for the operator's command line or the system)."""
    return user if isinstance(user, User) else None


def job_create(*, created_by: Any = None, actor: str = "", **fields: Any) -> Job:
    """Queue a job. `fields` are Job fields as validated by jobs.serializers.JobInSerializer
    (and, for a bisection's jobs, `bisection` and `bisect_range`).

    `created_by` must have the right to run jobs where the job may run (hosts.access):
    HostForbidden (403, naming the host) otherwise. None is the operator (manage.py job_create).

    Each version that names a recipe gets the recipe's build spec as it is now (patches
    inline), so later changes to the recipe never change what this job builds. `builds` given
    in `fields` (a bisection's commits, which no recipe names; a rerun's builds as they were
    made) are the build specs instead.
    """
    job_target_check(
        person=_person(created_by),
        host=fields.get("host"),
        host_tags=fields.get("host_tags") or [],
    )
    if fields.get("builds") is None:
        fields["builds"] = recipe_specs(names=list(fields["versions"]))
    with transaction.atomic():
        job = Job.objects.create(created_by=created_by, **fields)
        _event(job, "queued", actor or str(created_by or "system"))
    return job


# The fields of a job that define what it measures, copied as they are when it is queued again.
JOB_DEFINITION_FIELDS = (
    "versions",
    "workload",
    *PLAN_FIELDS,
    "host_tags",
    "tablespaces",
    "priority",
    "max_attempts",
)


def _job_request_of_job(job: Job) -> dict[str, Any]:
    """The whole job again: every version (the whole comparison), the full workload definition
    (streams, per-level setup, combine, progress interval, catalog entry and params), the thread
    pairs, the durations, the warm-up and the level order with its seed."""
    request = {name: getattr(job, name) for name in JOB_DEFINITION_FIELDS}
    request["host"] = job.host.name if job.host is not None else None
    return request


def _threads_of(run: Run) -> dict[str, Any]:
    """The threads policy that reproduces the run's pgbench -j: clients, one fixed value, or a
    pair per level."""
    measured = {r.clients: r.threads for r in run.results.only("clients", "threads") if r.threads}
    if all(c == t for c, t in measured.items()):
        return {}
    if len(set(measured.values())) == 1 and len(measured) == len(run.clients):
        return {"threads_policy": Job.Threads.FIXED, "threads": next(iter(measured.values()))}
    if set(measured) == set(run.clients):
        return {
            "threads_policy": Job.Threads.PAIRS,
            "level_threads": {str(c): t for c, t in measured.items()},
        }
    return {}


# The -T of a rerun of a summary import that did not say its duration: the catalog's published
# experiments ran 60 to 300 s per level, and a minute is the shortest of those.
RERUN_DURATION_S = 60.0


def job_request_of(run: Run) -> dict[str, Any]:
    """The job that measures what `run` measured (for a run that came with no job, an import;
    for more repeats of a comparison; for a bisection that starts from it): same build
    version, full workload definition, scale, levels, durations, repeats, warm-up, overrides
    and host, and pgbench -j as the run's results had it."""
    workload = run.workload
    definition = workload_definition(
        **{name: getattr(workload, name) for name in (*BASE_FIELDS, *OPTIONAL_DEFAULTS)}
    )
    request: dict[str, Any] = {
        "versions": [run.build.version],
        "workload": definition,
        **_plan_of(run),
        "host": run.host.name,
        "tablespaces": [t["name"] for t in run.tablespaces or []],
        **_threads_of(run),
    }
    if run.shuffle_seed is not None:
        request["level_order"] = Job.LevelOrder.SHUFFLED
    if not run.duration_s:
        request.pop("duration_s", None)
        request.pop("level_durations", None)
    if not (run.duration_s or run.transactions_per_client):
        # A published table that did not say how long each level ran.
        request["duration_s"] = RERUN_DURATION_S
    return request


def _plan_of(run: Run) -> dict[str, Any]:
    """The plan fields the run stores (benchhub_runner.jobspec.plan), as it stored them; the others
    take their defaults when the request is validated."""
    columns = {column.name for column in Run._meta.concrete_fields}
    values = {name: getattr(run, name) for name in PLAN_FIELDS if name in columns}
    return {name: value for name, value in values.items() if value is not None}


def job_create_again(*, run: Run, created_by: Any) -> Job:
    """Queue again the job that measured `run` (the run page's "Queue this again"): the whole
    job with its full definition when the run came from one, else a job made from the run.
    Each version built from source is built as its run's build was (its provenance: the commit
    it resolved, its patches and flags; see _rerun_builds), never from the recipe as it is now.

    The request is validated as the API validates one, so a run whose host or workload no longer
    passes is refused: JobError `invalid` (400), its detail naming each field at fault.
    """
    if run.source == Run.Source.SUMMARY and not (run.workload.builtin or run.workload.streams):
        if all("not published" in script.get("body", "") for script in run.workload.scripts):
            raise JobError(
                "invalid",
                "This summary import does not say what its workload ran; queue a job with the "
                "workload you mean instead.",
                status=400,
            )
    job = Job.objects.select_related("host").filter(pk=run.job_id).first() if run.job_id else None
    request = _job_request_of_job(job) if job is not None else job_request_of(run)
    ran = [run]
    if job is not None:
        ran += list(job.runs.filter(job_attempt=run.job_attempt).select_related("build"))
    refusal = "This run cannot be queued again"
    fields = _validated(request, refusal)
    fields["builds"] = _rerun_builds(versions=fields["versions"], runs=ran, refusal=refusal)
    return job_create(
        created_by=created_by,
        actor=f"{created_by.get_username()} (again from run {run.uuid})",
        **fields,
    )


def _build_name(version: str) -> str:
    try:
        return version_parse(version).name.lower()
    except VersionError:
        return version.strip().lower()


def _rerun_builds(*, versions: list[str], runs: list[Run], refusal: str) -> dict[str, Any]:
    """The build spec of each of `versions` as its run's build was made (builds.selectors.
    build_specs_pinned: the resolved commit, the patches and flags it was built with), else as
    the runs' job queued it; a version neither names stays without one (a release the agent
    provisions). Never the recipe's current definition: a patch added or a branch moved since
    would make the rerun measure another build, whose runs fall outside the comparison."""
    built = {_build_name(run.build.version): run.build for run in runs}
    queued: dict[str, dict[str, Any]] = {}
    # One run per job: its job is read once however many of its runs there are.
    for run in {run.job_id: run for run in runs if run.job_id is not None}.values():
        for name, spec in (run.job.builds if run.job is not None else {}).items():
            queued.setdefault(_build_name(name), spec)
    builds = {v: built[_build_name(v)] for v in versions if _build_name(v) in built}
    given = {v: queued[_build_name(v)] for v in versions if _build_name(v) in queued}
    try:
        pinned = build_specs_pinned(builds=builds, given=given)
    except BuildSpecError as exc:
        raise JobError("invalid", f"{refusal}: {exc.detail}", status=400) from None
    return {**given, **pinned}


def job_create_more(
    *,
    runs: list[Run],
    clients: list[int],
    repeats: int,
    created_by: Any,
    reason: str,
    aa: bool = False,
) -> Job:
    """Queue more repeats of what `runs` measured (a comparison's "settle it"): their builds'
    versions, in order, at `clients`, `repeats` repeats each, on the first run's host with its
    workload, scale, length, pgbench threads and configuration overrides, the pgbench client its
    job pinned (Job.client), and each build as it was made (_rerun_builds), so the new runs
    share the runs' builds and comparability keys and join their comparison. `aa`: one version
    against itself.

    Raises JobError `invalid` (400) when the request does not validate (the detail names each
    field), as job_create_again does.
    """
    request = job_request_of(runs[0])
    versions = list(dict.fromkeys(run.build.version for run in runs))
    request.update(versions=versions[:1] if aa else versions, clients=clients, repeats=repeats)
    if aa:
        request["aa"] = True
    if runs[0].job is not None:
        # The pgbench client is held constant in a comparison: a run driven by another
        # client would stay out of the set it was queued to settle.
        request["client"] = runs[0].job.client
    refusal = "These runs cannot be measured again"
    fields = _validated(request, refusal)
    fields["builds"] = _rerun_builds(versions=fields["versions"], runs=runs, refusal=refusal)
    return job_create(
        created_by=created_by,
        actor=f"{created_by.get_username()} ({reason})"[:200],
        **fields,
    )


def _validated(request: dict[str, Any], refusal: str) -> dict[str, Any]:
    body = JobInSerializer(data=request)
    if not body.is_valid():
        problems = "; ".join(
            f"{path}: {' '.join(msgs)}" for path, msgs in flatten_errors(body.errors).items()
        )
        raise JobError("invalid", f"{refusal}: {problems}", status=400)
    return body.validated_data


def job_claim(
    *, token: RunnerToken, tablespaces: list[str] | None = None, tags: list[str] | None = None
) -> Job | None:
    """Give the agent of `token` the most urgent queued job its host may run, or None.

    `tablespaces` are the names the agent offers: a job naming any other is left for another
    host. The host keeps the offer (Host.tablespaces) so a job naming it can be checked when
    queued. `tags` are the host's tags as its agent offers them: they replace Host.tags, and a
    job requiring any other is left for another host; None (an agent that names none) keeps the
    host's tags. Both are stored by the claim's one statement, so offering new ones costs no
    query.

    An agent holds at most one job: one that asks for work while still holding a job has lost
    it (it restarted), so that job is put back in the queue first. Order: priority (high first),
    then age. Host match: the job names this host, or names none and asks for a subset of its tags.
    The job comes back with its host, claimed host and creator's name set, for the reply.
    """
    host = token.host
    with transaction.atomic():
        held = Job.objects.raw(
            f"SELECT * FROM {Job._meta.db_table} WHERE claimed_by_id = %s AND state = ANY(%s)"  # noqa: S608 - the model's table; values are parameters
            " FOR UPDATE",
            [token.pk, list(Job.ACTIVE)],
        )
        for lost in held:
            _requeue(lost, actor=_runner(token), reason="its agent asked for new work")
        host.tablespaces = sorted(set(tablespaces or []))
        if tags is not None:
            host.tags = sorted(set(tags))
        now = timezone.now()  # after any requeue, whose event comes first
        claimed = Job.objects.raw(
            _claim_sql(),
            {
                "host": host.pk,
                # What the host offers now; the stored tags change only when it named them.
                "tags": host.tags,
                "offered_tags": host.tags if tags is not None else None,
                "offered": host.tablespaces,
                "token": token.pk,
                "now": now,
                "seen_before": now - SEEN_RESOLUTION,
                "lease": _lease_end(),
                "actor": _runner(token),
            },
        )
        job = next(iter(claimed), None)
    if job is None:
        return None
    # The reply names the job's host and creator: set from what the statement returned, not
    # read again (a queued job names this host or none).
    job.host = host if job.host_id == host.pk else None
    job.claimed_host = host
    job.created_by = (
        User.from_db(
            None, ["id", "username"], [job.created_by_id, cast(Any, job).created_by_username]
        )
        if job.created_by_id is not None
        else None
    )
    return job


@functools.cache
def _claim_sql() -> str:
    """One statement for a claim: note that the host called in, lock the most urgent job it
    may run (SKIP LOCKED: concurrent claims never wait on each other or get the same job), mark
    it claimed, log the event, and return it with its creator's name and its runs' UUIDs (an
    earlier attempt's, in the order Run's default ordering gives). A claim is the request
    200 agents make most; the ORM's version was five statements, each compiled per call, and
    took three times the CPU (docs/performance-log.md, "Fifth pass"). The host's row is written
    only when its agent was last seen over SEEN_RESOLUTION ago or its offer (tags, tablespaces)
    changed; the job's required tags are matched with `<@` against the offer, a filter on the
    queued jobs the claim-order index yields, like its tablespaces."""
    quote = connection.ops.quote_name
    columns = ", ".join(f"claimed.{quote(cast(str, f.column))}" for f in Job._meta.concrete_fields)
    job, event, host = Job._meta.db_table, JobEvent._meta.db_table, Host._meta.db_table
    tags = Job._meta.get_field("host_tags").db_type(connection)
    names = Job._meta.get_field("tablespaces").db_type(connection)
    host_tags = Host._meta.get_field("tags").db_type(connection)
    host_names = Host._meta.get_field("tablespaces").db_type(connection)
    # The names and types come from the models; every value is a parameter.
    return f"""
        WITH seen AS (
            UPDATE {host} SET last_seen_at = %(now)s,
                tags = COALESCE(%(offered_tags)s::{host_tags}, tags),
                tablespaces = %(offered)s::{host_names}
            WHERE id = %(host)s AND (
                last_seen_at IS NULL OR last_seen_at < %(seen_before)s
                OR tags <> COALESCE(%(offered_tags)s::{host_tags}, tags)
                OR tablespaces <> %(offered)s::{host_names}
            )
        ), chosen AS (
            SELECT id FROM {job}
            WHERE state = '{Job.State.QUEUED.value}'
              AND (host_id = %(host)s OR (host_id IS NULL AND host_tags <@ %(tags)s::{tags}))
              AND tablespaces <@ %(offered)s::{names}
            ORDER BY priority DESC, created_at, id
            LIMIT 1
            FOR UPDATE SKIP LOCKED
        ), claimed AS (
            UPDATE {job} AS job
            SET state = '{Job.State.CLAIMED.value}', attempt = job.attempt + 1,
                claimed_by_id = %(token)s, claimed_host_id = %(host)s, claimed_at = %(now)s,
                lease_expires_at = %(lease)s, progress = '{{}}'
            FROM chosen WHERE job.id = chosen.id
            RETURNING job.*
        ), logged AS (
            INSERT INTO {event} (job_id, at, kind, attempt, actor, message)
            SELECT id, %(now)s, 'claimed', attempt, %(actor)s, '' FROM claimed
        )
        SELECT {columns}, creator.username AS created_by_username,
            ARRAY(
                SELECT run.uuid::text FROM {Run._meta.db_table} AS run
                WHERE run.job_id = claimed.id ORDER BY run.started_at DESC, run.id DESC
            ) AS run_uuids
        FROM claimed LEFT JOIN {User._meta.db_table} AS creator
          ON creator.id = claimed.created_by_id
    """  # noqa: S608


# Polling agents would otherwise rewrite their host's row on every call.
SEEN_RESOLUTION = timedelta(seconds=5)


def _seen(host_id: int, now: Any) -> None:
    """Record that the host's agent called in (at most once per SEEN_RESOLUTION)."""
    Host.objects.filter(pk=host_id).filter(
        Q(last_seen_at__isnull=True) | Q(last_seen_at__lt=now - SEEN_RESOLUTION)
    ).update(last_seen_at=now)


def _held(job_id: int, token: RunnerToken, attempt: int | None = None) -> Job:
    """The job, locked, when `token` holds it (and `attempt`, when given, is its live attempt).

    An agent that lost its job and claimed it again holds a newer attempt: a heartbeat, finish
    or release still speaking for the old one is refused (`stale_attempt`), or the old process
    would keep the new attempt's lease alive, or end it."""
    # One row by its key: no ORDER BY for first() to compile on every heartbeat.
    job = next(iter(Job.objects.select_for_update().filter(pk=job_id)), None)
    if job is None:
        raise JobError("job_state", f"No job {job_id}.")
    if job.claimed_by_id != token.pk:
        raise JobError("lease_lost", f"Job {job_id} is not held by this runner.")
    if attempt is not None and attempt != job.attempt:
        raise JobError(
            "stale_attempt",
            f"Job {job_id} is at attempt {job.attempt}, not {attempt}.",
            field="attempt",
        )
    return job


def job_heartbeat(
    *, job_id: int, token: RunnerToken, progress: dict[str, Any], attempt: int | None = None
) -> HeartbeatReply:
    """Renew the lease and store live progress; the first heartbeat marks the job running.

    A cancelled job answers `cancel=True` so its agent stops. Raises JobError `lease_lost` when
    the job is no longer this agent's, `stale_attempt` when `attempt` is not the live one.
    """
    now = timezone.now()
    with transaction.atomic():
        job = _held(job_id, token, attempt)
        if job.state == Job.State.CANCELLED:
            return HeartbeatReply(cancel=True, lease_expires_at=None)
        if job.state not in Job.ACTIVE:
            raise JobError("lease_lost", f"Job {job_id} is {job.state}.")
        if job.state == Job.State.CLAIMED:
            job.state, job.started_at = Job.State.RUNNING, now
            _event(job, "running", _runner(token))
        job.lease_expires_at = _lease_end()
        job.last_heartbeat_at = now
        job.progress = progress
        job.save(
            update_fields=[
                "state",
                "started_at",
                "lease_expires_at",
                "last_heartbeat_at",
                "progress",
            ]
        )
        _seen(token.host_id, now)
    return HeartbeatReply(cancel=False, lease_expires_at=job.lease_expires_at)


def job_finish(
    *,
    job_id: int,
    token: RunnerToken,
    outcome: str,
    stage: str = "",
    message: str = "",
    attempt: int | None = None,
) -> Job:
    """End the agent's job as done or failed (with the stage and message of the failure).

    `done` requires one uploaded run per version for the current attempt, so a job never says
    done with results missing; a bisection's listing job, its range stored instead (no runs).
    Finishing a job that was cancelled meanwhile is acknowledged. A bisection's job queues the
    bisection's advance on commit.
    """
    with transaction.atomic():
        job = _held(job_id, token, attempt)
        if job.state == Job.State.CANCELLED:
            return job
        if job.state not in Job.ACTIVE:
            raise JobError("lease_lost", f"Job {job_id} is {job.state}.")
        if outcome == Job.State.DONE and job.bisect_range:
            _range_stored_check(job)
        elif outcome == Job.State.DONE:
            uploaded = Run.objects.filter(job=job, job_attempt=job.attempt).count()
            if uploaded != len(job.versions):
                raise JobError(
                    "job_state",
                    f"Job {job_id} has {uploaded} of {len(job.versions)} runs "
                    f"uploaded for attempt {job.attempt}; upload them first.",
                )
        job.state = outcome
        job.finished_at = timezone.now()
        job.lease_expires_at = None
        job.failure_stage, job.failure_message = stage, message
        job.save()
        _event(job, outcome, _runner(token), f"{stage}: {message}" if stage else message)
        _ended_announce(job)
    return job


def _range_stored_check(job: Job) -> None:
    bisection = job.bisection
    if bisection is None or bisection.state == bisection.State.LISTING:
        raise JobError(
            "job_state",
            f"Job {job.pk} lists a bisection's range: send it first (POST .../range/).",
        )


def _ended_announce(job: Job) -> None:
    """Announce that the job ended (jobs.signals.job_ended) once this transaction commits: a
    bisection's job has its bisection take its next step."""
    job_id, state, bisection_id = job.pk, job.state, job.bisection_id
    transaction.on_commit(
        lambda: job_ended.send(sender=Job, job_id=job_id, state=state, bisection_id=bisection_id)
    )


def job_release(*, job_id: int, token: RunnerToken, reason: str, attempt: int | None = None) -> Job:
    """The agent gives the job back (it is stopping): queue it again now rather than at lease
    expiry. Counts as an attempt, like an expiry."""
    with transaction.atomic():
        job = _held(job_id, token, attempt)
        if job.state in Job.ACTIVE:
            _requeue(job, actor=_runner(token), reason=f"released: {reason}")
    return job


def _cancel_check(job: Job, person: User | None) -> None:
    """Who queued a job may cancel it, and so may anyone with the right to run on its host."""
    if person is None or person.is_staff or job.created_by_id == person.pk:
        return
    job_target_check(person=person, host=job.host, host_tags=job.host_tags)


def job_cancel(*, job_id: int, actor: str, by: Any = None) -> Job:
    """Cancel a job that has not ended; a running one stops at its agent's next heartbeat.

    `by` (the person asking) must have queued it or may run jobs where it runs: HostForbidden
    (403) otherwise. None is the operator.
    """
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(pk=job_id).first()
        if job is None:
            raise JobError("job_state", f"No job {job_id}.")
        _cancel_check(job, _person(by))
        if job.state in Job.FINAL:
            raise JobError("job_state", f"Job {job_id} is already {job.state}.")
        job.state = Job.State.CANCELLED
        job.finished_at = timezone.now()
        job.lease_expires_at = None
        job.save()
        _event(job, "cancelled", actor)
        _ended_announce(job)
    return job


def job_upload_check(*, job_id: int, attempt: int, token: RunnerToken | None) -> Job:
    """Lock the job a run upload belongs to and check the upload is for its live attempt.

    Called inside the upload's transaction, so a lease expiry cannot interleave: either the run
    is stored under the live attempt, or the upload is refused as stale.
    """
    job = Job.objects.select_for_update().filter(pk=job_id).first()
    if job is None:
        raise JobError("stale_job", f"No job {job_id}.", field="job")
    if token is None or job.claimed_by_id != token.pk:
        raise JobError("stale_job", f"Job {job_id} is not held by this runner.", field="job")
    if job.state not in Job.ACTIVE or job.attempt != attempt:
        raise JobError(
            "stale_job",
            f"Job {job_id} attempt {attempt} is no longer live "
            f"(job is {job.state}, attempt {job.attempt}).",
            field="job",
        )
    return job


def _requeue(job: Job, *, actor: str, reason: str) -> None:
    """Take the job from its agent: queue it again, or expire it after max_attempts.

    Runs already uploaded under the abandoned attempt are deleted, so the re-run stores exactly
    one complete set; the event says how many were discarded.
    """
    abandoned = Run.objects.filter(job=job, job_attempt=job.attempt)
    discarded = abandoned.count()
    abandoned.delete()
    note = f"{reason}; attempt {job.attempt} abandoned"
    if discarded:
        note += f", its {discarded} uploaded run(s) discarded"
    if job.attempt >= job.max_attempts:
        job.state = Job.State.EXPIRED
        job.finished_at = timezone.now()
        stage = job.progress.get("stage", "") if isinstance(job.progress, dict) else ""
        # Progress predating the heartbeat's check may hold anything: keep it to the column.
        job.failure_stage = str(stage)[: Job._meta.get_field("failure_stage").max_length]
        job.failure_message = f"{note}; no attempts left"
        kind = "expired"
    else:
        job.state = Job.State.QUEUED
        kind = "requeued"
    job.claimed_by = job.claimed_host = None
    job.lease_expires_at = None
    job.save()
    _event(job, kind, actor, note)
    if job.state == Job.State.EXPIRED:
        _ended_announce(job)


def jobs_expire_leases() -> int:
    """Requeue (or expire) every active job whose lease lapsed; returns how many.

    Each job in its own transaction: one job the database refuses to requeue is logged and left
    for the next sweep, and every other lapsed job is still requeued (one bad row once made
    the whole sweep fail, every 10 s, for every job).
    """
    count = 0
    lapsed = Job.objects.filter(
        state__in=Job.ACTIVE, lease_expires_at__lt=timezone.now()
    ).values_list("pk", flat=True)[:1000]
    for job_id in list(lapsed):
        try:
            with transaction.atomic():
                job = (
                    Job.objects.select_for_update(skip_locked=True)
                    .filter(pk=job_id, state__in=Job.ACTIVE, lease_expires_at__lt=timezone.now())
                    .first()
                )
                if job is None:  # renewed, finished or being handled meanwhile
                    continue
                _requeue(job, actor="beat", reason="lease expired without a heartbeat")
                count += 1
        except Exception:
            logger.exception("lease expiry of job %s failed; the next sweep tries again", job_id)
    return count


class ScheduleError(ApplicationError):
    """A schedule request that clashes with someone else's schedule."""

    status = 409


def _template_target_check(*, person: User | None, template: dict[str, Any]) -> None:
    host_name = template.get("host")
    host = (
        Host.objects.filter(name_key=host_name_key(host_name)).first()
        if isinstance(host_name, str)
        else None
    )
    tags = template.get("host_tags") or []
    job_target_check(
        person=person,
        host=host,
        host_tags=[t for t in tags if isinstance(t, str)],
        field="template.host",
    )


def schedule_may_change(*, schedule: JobSchedule, person: User | None) -> bool:
    """Whether `person` may change, pause or delete `schedule`: its creator or staff (None, the
    operator's command line, always may). Saving or resuming also takes the host right."""
    return person is None or person.is_staff or schedule.created_by_id == person.pk


def _schedule_owner_check(*, schedule: JobSchedule, person: User | None) -> None:
    if schedule_may_change(schedule=schedule, person=person):
        return
    raise ScheduleError(
        "forbidden_schedule",
        f"The schedule '{schedule.name}' belongs to someone else; only they or staff change it.",
        field="name",
        status=403,
    )


def schedule_save(
    *,
    name: str,
    crontab: str,
    template: dict[str, Any],
    enabled: bool = True,
    file_set: str = "",
    created_by: Any = None,
) -> JobSchedule:
    """Create or update a recurring job and its database-backed beat entry.

    `template` is the job request as JobInSerializer accepts it (host by name); it is validated
    again when the schedule fires, so a host deleted meanwhile fails that firing, loudly.
    `crontab` is valid for celery (jobs.serializers.crontab_check). A schedule of that name made
    by someone else is theirs: 403 `forbidden_schedule` unless `created_by` is staff, and its
    creator stays who it was. `created_by` needs the right to run jobs on the template's host.
    `file_set` names the files `benchhub apply` keeps the schedule with ("" for by hand); a save
    sets it, so saving a file's schedule by hand takes it out of the set.
    """
    from django_celery_beat.models import CrontabSchedule, PeriodicTask

    person = _person(created_by)
    _template_target_check(person=person, template=template)
    minute, hour, day, month, weekday = crontab.split()
    with transaction.atomic():
        existing = JobSchedule.objects.select_for_update().filter(name=name).first()
        if existing is not None:
            _schedule_owner_check(schedule=existing, person=person)
        cron, _ = CrontabSchedule.objects.get_or_create(
            minute=minute,
            hour=hour,
            day_of_month=day,
            month_of_year=month,
            day_of_week=weekday,
            timezone="UTC",
        )
        schedule = existing or JobSchedule(name=name, created_by=created_by)
        schedule.crontab, schedule.template, schedule.enabled = crontab, template, enabled
        schedule.file_set = file_set
        schedule.save()
        task, _ = PeriodicTask.objects.update_or_create(
            name=f"benchhub job schedule {schedule.pk}",
            defaults={
                "task": "jobs.schedule_fire",
                "crontab": cron,
                "args": f"[{schedule.pk}]",
                "enabled": enabled,
            },
        )
        if schedule.periodic_task_id != task.pk:
            schedule.periodic_task = task
            schedule.save(update_fields=["periodic_task"])
    return schedule


def schedule_enable(*, schedule: JobSchedule, enabled: bool, by: Any = None) -> JobSchedule:
    """Pause (`enabled` False) or resume a schedule and its beat entry, nothing else changed;
    only its creator or staff (403 `forbidden_schedule`). Resuming also takes the right to run
    jobs on the template's host (403 `forbidden_host`); pausing never does, so a person whose
    right was withdrawn can still stop their schedule."""
    person = _person(by)
    _schedule_owner_check(schedule=schedule, person=person)
    if enabled:
        _template_target_check(person=person, template=schedule.template)
    with transaction.atomic():
        schedule.enabled = enabled
        schedule.save(update_fields=["enabled"])
        task = schedule.periodic_task
        if task is not None and task.enabled != enabled:
            # save(), not an update(): its signal tells beat to reload its schedule.
            task.enabled = enabled
            task.save()
    return schedule


def schedule_delete(*, schedule: JobSchedule, by: Any = None) -> None:
    """Delete a schedule and its beat entry; only its creator or staff (403 otherwise)."""
    _schedule_owner_check(schedule=schedule, person=_person(by))
    with transaction.atomic():
        if schedule.periodic_task is not None:
            schedule.periodic_task.delete()
        schedule.delete()


def schedule_fire(*, schedule_id: int) -> Job | None:
    """Queue the schedule's job now; None when the schedule is gone or disabled."""
    schedule = JobSchedule.objects.filter(pk=schedule_id, enabled=True).first()
    if schedule is None:
        return None
    request = JobInSerializer(data=schedule.template)
    if not request.is_valid():
        raise JobError(
            "invalid_template",
            f"Schedule {schedule.name} has an invalid template: {request.errors}",
        )
    return job_create(
        schedule=schedule,
        actor=f"schedule {schedule.name}",
        created_by=schedule.created_by,
        **request.validated_data,
    )
