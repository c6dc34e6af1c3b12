"""Writes of bisections: create (queue the listing job), store the range the agent listed (queue
the ends), advance after each of its jobs ends (one step: a verdict, then the next commit or the
end), cancel.

The server drives a bisection with ordinary jobs, one per step, on the bisection's host with its
workload, one client level and its repeats: the listing job (`bisect_range`, measures nothing),
the ends job (the good and the bad end), then one job per commit measured (or more repeats of
one whose verdict is unknown). Every job carries `bisection`, and its end queues
`bisection_advance` on commit (jobs.services), as does the aggregation of its runs
(results.services), since the verdicts read the runs' steady-state means.
"""

import logging
import statistics
from collections.abc import Sequence
from typing import Any

from benchhub_runner.build import SpecError, git_ref_parse
from benchhub_runner.jobspec.plan import plan_default
from django.db import transaction
from django.utils import timezone

from benchhub.bisections.decide import (
    Change,
    ChangeError,
    StepDecision,
    StepVerdict,
    given_change,
    measured_change,
    step_verdict,
)
from benchhub.bisections.models import BISECTION_PLAN_FIELDS, Bisection, BisectionCommit
from benchhub.bisections.origins import Origin
from benchhub.bisections.search import Commit, Found, Narrowed, RangeError, next_step
from benchhub.builds.models import Recipe
from benchhub.builds.specs import recipe_spec
from benchhub.builds.versions import version_parse
from benchhub.errors import ApplicationError
from benchhub.hosts.access import job_target_check
from benchhub.hosts.models import Host, RunnerToken
from benchhub.jobs.models import Job
from benchhub.jobs.services import job_cancel, job_create, job_upload_check
from benchhub.results.models import Result, Run
from benchhub.stats.repeats import RunMean

logger = logging.getLogger(__name__)


class BisectionError(ApplicationError):
    """A bisection request that does not fit: the detail says why, `field` names the field."""

    status = 400


def step_version(*, recipe_name: str, sha: str) -> str:
    """The version name a commit of the recipe's repository is built and measured as:
    `master@<sha12>` or `<major>devel@<sha12>`, plus the recipe's `+label` (benchhub_runner
    .versions grammar), so its runs sort with the recipe's major and name their commit."""
    parsed = version_parse(recipe_name)
    head = "master" if parsed.major == "master" else f"{parsed.major}devel"
    label = f"+{parsed.label}" if parsed.label else ""
    return f"{head}@{sha[:12].lower()}{label}"


def refs_check(*, recipe: Recipe, good: str, bad: str) -> dict[str, str]:
    """Field errors of a bisection's recipe and refs ({} when they are fine): the recipe must
    build from git, and both refs must be refs as its `ref` field accepts them."""
    if recipe.source_kind != Recipe.Kind.GIT:
        return {
            "recipe": f"The recipe {recipe.name} builds from a {recipe.source_kind}; a bisection "
            "needs a recipe that builds from a git repository."
        }
    errors = {}
    for field, ref in (("good", good), ("bad", bad)):
        try:
            git_ref_parse(recipe.url, ref)
        except SpecError as exc:
            errors[field] = exc.message
    return errors


# --- create ------------------------------------------------------------------------------------


def bisection_create(
    *,
    recipe: Recipe,
    good: str,
    bad: str,
    job: dict[str, Any],
    repeats: int = 3,
    max_repeats: int = 9,
    change: float | None = None,
    origin: Origin | None = None,
    created_by: Any = None,
    actor: str = "",
) -> Bisection:
    """Start a bisection: store it and queue its listing job, in one transaction.

    `job` holds the job fields of its measurements as jobs.serializers.JobInSerializer validated
    them (versions [recipe name], workload, clients (one level), host, and the plan fields of
    models.BISECTION_PLAN_FIELDS). `origin`: the runs (and regression) it starts from, kept for the
    page's links. `created_by` needs the right to run jobs on the host: HostForbidden
    (403) otherwise; None is the operator. BisectionError naming the field when the recipe or a
    ref does not fit (refs_check).
    """
    errors = refs_check(recipe=recipe, good=good, bad=bad)
    if errors:
        field, detail = next(iter(errors.items()))
        raise BisectionError("invalid", detail, field=field)
    host = job.get("host")
    if not isinstance(host, Host):
        raise BisectionError("invalid", "A bisection runs on one host: name it.", field="host")
    job_target_check(person=_person(created_by), host=host, host_tags=[])
    with transaction.atomic():
        bisection = Bisection.objects.create(
            recipe=recipe,
            good_ref=good,
            bad_ref=bad,
            host=host,
            workload=job["workload"],
            **{name: job.get(name, plan_default(name)) for name in BISECTION_PLAN_FIELDS},
            clients=job["clients"][0],
            repeats=repeats,
            max_repeats=max_repeats,
            change=change,
            good_run=origin.good_run if origin else None,
            bad_run=origin.bad_run if origin else None,
            regression=origin.regression if origin else None,
            created_by=_person(created_by),
        )
        job_create(
            created_by=created_by,
            actor=actor or f"{created_by or 'system'} (bisection {bisection.pk})",
            **{**job, "versions": [recipe.name], "repeats": repeats},
            bisection=bisection,
            bisect_range={"url": recipe.url, "good": good, "bad": bad},
        )
    return bisection


def bisection_start(found: dict[str, Any], *, created_by: Any = None, actor: str = "") -> Bisection:
    """bisection_create with a request as serializers.BisectionInSerializer validated it (the
    API, the form and the command line)."""
    return bisection_create(
        recipe=found["recipe"],
        good=found["good"],
        bad=found["bad"],
        job=found["job"],
        repeats=found["repeats"],
        max_repeats=found["max_repeats"],
        change=found["change"],
        origin=found["origin"],
        created_by=created_by,
        actor=actor,
    )


def _person(user: Any) -> Any:
    from django.contrib.auth.models import User

    return user if isinstance(user, User) else None


# --- the range ---------------------------------------------------------------------------------


def bisection_range_store(
    *,
    job_id: int,
    token: RunnerToken,
    attempt: int,
    good: str,
    bad: str,
    commits: Sequence[dict[str, Any]],
) -> Bisection:
    """Store the range the listing job's agent found (validated by serializers
    .RangeInSerializer: bounded, 40-hex shas, newest first) and queue the ends job, in one
    transaction. Refused: JobError `stale_job` (409) when the agent does not hold the job's live
    attempt; BisectionError `not_listing` (409) for a job that is not a listing job or a range
    already stored; `invalid` (400, field named) for a range that does not start at `bad`."""
    with transaction.atomic():
        job = job_upload_check(job_id=job_id, attempt=attempt, token=token)
        if not job.bisect_range or job.bisection_id is None:
            raise BisectionError(
                "not_listing", f"Job {job_id} does not list a bisection's range.", status=409
            )
        bisection = (
            Bisection.objects.select_for_update().select_related("recipe").get(pk=job.bisection_id)
        )
        if bisection.state != Bisection.State.LISTING:
            raise BisectionError(
                "not_listing",
                f"Bisection {bisection.pk} is {bisection.state}: its range is already stored.",
                status=409,
            )
        if commits[0]["sha"] != bad:
            raise BisectionError("invalid", "The first commit is the bad end.", field="commits[0]")
        BisectionCommit.objects.bulk_create(
            [_range_commit(bisection, i, commit) for i, commit in enumerate(commits)]
        )
        bisection.good_sha, bisection.bad_sha = good, bad
        bisection.state = Bisection.State.RUNNING
        bisection.save(update_fields=["good_sha", "bad_sha", "state"])
        _queue(bisection, [good, bad], repeats=bisection.repeats, why="the two ends")
    return bisection


def _range_commit(bisection: Bisection, position: int, commit: dict[str, Any]) -> BisectionCommit:
    return BisectionCommit(
        bisection=bisection,
        position=position,
        sha=commit["sha"],
        parents=list(commit["parents"]),
        author=commit["author"],
        date=commit["date"],
        subject=commit["subject"],
        files=list(commit["files"]),
        files_total=commit["files_total"],
    )


def _queue(bisection: Bisection, shas: list[str], *, repeats: int, why: str) -> Job:
    """A measuring job of the bisection: `shas` built from the recipe at those commits, the
    bisection's workload at its one level, on its host."""
    recipe = bisection.recipe
    spec = recipe_spec(recipe, list(recipe.patches.order_by("position")))
    versions = [step_version(recipe_name=recipe.name, sha=sha) for sha in shas]
    builds = {
        version: {
            **spec,
            "name": version,
            "source": {"kind": "git", "url": recipe.url, "ref": sha},
        }
        for version, sha in zip(versions, shas, strict=True)
    }
    return job_create(
        created_by=bisection.created_by,
        actor=f"bisection {bisection.pk} ({why})",
        builds=builds,
        bisection=bisection,
        versions=versions,
        workload=bisection.workload,
        **{name: getattr(bisection, name) for name in BISECTION_PLAN_FIELDS},
        clients=[bisection.clients],
        repeats=repeats,
        host=bisection.host,
    )


# --- advance -----------------------------------------------------------------------------------


def bisection_advance_enqueue(*, bisection_id: int) -> None:
    """Queue bisection_advance (bisections.tasks.advance). A broker outage is logged: the
    bisection waits for the next of its jobs' events, or for the sweep (bisections_advance_idle,
    every minute)."""
    from benchhub.bisections.tasks import advance

    try:
        advance.apply_async(args=(bisection_id,))
    except Exception:
        logger.warning("could not queue the advance of bisection %s", bisection_id, exc_info=True)


def bisections_advance_idle(*, batch: int = 200) -> int:
    """Advance each open bisection none of whose jobs is queued or running (beat task
    `bisections.advance_idle`): an advance lost with the broker when a job ended is made up
    here. bisection_advance is idempotent, so one that was not lost changes nothing. Returns how
    many were looked at (oldest first, at most `batch`)."""
    ids = list(
        Bisection.objects.filter(state__in=Bisection.OPEN)
        .exclude(jobs__state__in=(Job.State.QUEUED, *Job.ACTIVE))
        .order_by("created_at", "id")
        .values_list("pk", flat=True)[:batch]
    )
    for bisection_id in ids:
        bisection_advance(bisection_id=bisection_id)
    return len(ids)


def bisection_advance(*, bisection_id: int) -> Bisection | None:
    """One step of the bisection once none of its jobs is queued or running and their runs are
    aggregated: the verdict of each commit measured, then the next commit's job, more repeats
    of an unknown one, or the end (found, narrowed, failed). Idempotent: with nothing new it
    changes nothing. Runs in one transaction under the bisection's row lock."""
    with transaction.atomic():
        bisection = (
            Bisection.objects.select_for_update(of=("self",))
            .select_related("recipe", "host", "created_by")
            .filter(pk=bisection_id)
            .first()
        )
        if bisection is None or bisection.state not in Bisection.OPEN:
            return bisection
        jobs = list(bisection.jobs.order_by("created_at", "id"))
        if any(job.state not in Job.FINAL for job in jobs):
            return bisection
        if bisection.state == Bisection.State.LISTING:
            if jobs and jobs[-1].state != Job.State.DONE:
                _end(bisection, Bisection.State.FAILED, f"listing the range: {_failure(jobs[-1])}")
            return bisection
        if Run.objects.filter(job__bisection=bisection, aggregated_at__isnull=True).exists():
            return bisection
        try:
            _step(bisection, [job for job in jobs if not job.bisect_range])
        except (ChangeError, RangeError, ApplicationError) as exc:
            _end(bisection, Bisection.State.FAILED, getattr(exc, "detail", None) or str(exc))
    return bisection


def _failure(job: Job) -> str:
    if job.state == Job.State.CANCELLED:
        return f"job {job.pk} was cancelled"
    stage = f" at {job.failure_stage}" if job.failure_stage else ""
    return f"job {job.pk} {job.state}{stage}: {job.failure_message[:500]}".rstrip(": ")


def _measurements(bisection: Bisection, shas: dict[str, str]) -> dict[str, list[RunMean]]:
    """Each commit's valid repeats at the bisection's level, from every run of its jobs."""
    found: dict[str, list[RunMean]] = {}
    rows = (
        Result.objects.filter(
            run__job__bisection=bisection,
            clients=bisection.clients,
            aborted=False,
            steady_tps__gt=0,
        )
        .order_by("run_id", "repeat")
        .values_list(
            "run__build__version", "steady_tps", "steady_tps_se", "steady_seconds", "steady_block"
        )
    )
    for version, tps, tps_se, seconds, block in rows:
        sha = shas.get(version.lower())
        if sha is not None and tps is not None:
            found.setdefault(sha, []).append(
                RunMean(value=tps, within_se=tps_se or 0.0, seconds=seconds, block=block)
            )
    return found


def _step(bisection: Bisection, jobs: list[Job]) -> None:
    commits = list(bisection.commits.all())
    name = bisection.recipe.name
    shas = {step_version(recipe_name=name, sha=c.sha).lower(): c.sha for c in commits}
    shas[step_version(recipe_name=name, sha=bisection.good_sha).lower()] = bisection.good_sha
    latest: dict[str, Job] = {}
    for job in jobs:
        for version in job.versions:
            if version.lower() in shas:
                latest[shas[version.lower()]] = job
    measured = _measurements(bisection, shas)
    good, bad = measured.get(bisection.good_sha, []), measured.get(bisection.bad_sha, [])
    if not good or not bad:
        ends = latest.get(bisection.bad_sha)
        why = (
            _failure(ends)
            if ends is not None and ends.state != Job.State.DONE
            else f"no valid result at {bisection.clients} clients"
        )
        _end(bisection, Bisection.State.FAILED, f"the two ends could not be measured: {why}")
        return
    change = (
        given_change(bisection.change)
        if bisection.change is not None
        else measured_change(good, bad)
    )
    bisection.good_tps = statistics.fmean(m.value for m in good)
    bisection.change_used = change.value
    bisection.save(update_fields=["good_tps", "change_used"])
    if bisection.change is not None and not _reproduced(bisection, good, bad, change):
        return
    _record_bad_end(commits[0], bad)
    for commit in commits[1:]:
        last = latest.get(commit.sha)
        if last is not None and _judge(bisection, commit, last, good, measured, change):
            return  # more repeats of it were queued
    _next(bisection, commits)


def _reproduced(
    bisection: Bisection, good: list[RunMean], bad: list[RunMean], change: Change
) -> bool:
    """A given change (a comparison's, a regression's) must show between the two ends as this
    host measures them now, or the search would chase something that is not there: the bad end
    is judged as a step is. Unknown: more repeats of both ends, up to max_repeats; then, or
    when the bad end is good, the bisection fails saying what the ends measured."""
    decision = step_verdict(good, bad, change=change)
    if decision.verdict == StepVerdict.BAD:
        return True
    if decision.verdict == StepVerdict.UNKNOWN and len(bad) < bisection.max_repeats:
        more = min(bisection.repeats, bisection.max_repeats - len(bad))
        _queue(
            bisection,
            [bisection.good_sha, bisection.bad_sha],
            repeats=more,
            why="more repeats of the two ends: the change does not show yet",
        )
        return False
    measured = decision.ratio
    interval = (
        f", 95% interval {measured.low:.1%} .. {measured.high:.1%}"
        if measured.low is not None and measured.high is not None
        else ""
    )
    _end(
        bisection,
        Bisection.State.FAILED,
        f"the change looked for ({change.value:.1%} of the good end's tps) does not show between "
        f"the two ends on {bisection.host.name}: the bad end measured {measured.value:.1%} of "
        f"the good end's{interval}, after {len(bad)} repeats; {decision.reason}",
    )
    return False


def _record_bad_end(commit: BisectionCommit, bad: list[RunMean]) -> None:
    commit.verdict, commit.step = BisectionCommit.Verdict.BAD, 0
    commit.tps = statistics.fmean(m.value for m in bad)
    commit.repeats, commit.position_value = len(bad), 1.0
    commit.reason = "the bad end"
    commit.save()


def _judge(
    bisection: Bisection,
    commit: BisectionCommit,
    job: Job,
    good: list[RunMean],
    measured: dict[str, list[RunMean]],
    change: Change,
) -> bool:
    """Record the commit's verdict; True when more repeats of it were queued."""
    mine = measured.get(commit.sha, [])
    commit.repeats = len(mine)
    commit.tps = statistics.fmean(m.value for m in mine) if mine else None
    if job.state != Job.State.DONE or not mine:
        commit.verdict = BisectionCommit.Verdict.SKIPPED
        commit.reason = (
            _failure(job)
            if job.state != Job.State.DONE
            else f"no valid result at {bisection.clients} clients"
        )
        commit.save()
        return False
    decision = step_verdict(good, mine, change=change)
    _decision_set(commit, decision)
    if decision.verdict != StepVerdict.UNKNOWN:
        commit.save()
        return False
    if len(mine) < bisection.max_repeats:
        commit.save()
        more = min(bisection.repeats, bisection.max_repeats - len(mine))
        _queue(bisection, [commit.sha], repeats=more, why=f"more repeats of {commit.sha[:12]}")
        return True
    commit.verdict = BisectionCommit.Verdict.SKIPPED
    commit.reason = f"still unknown after {len(mine)} repeats: {decision.reason}"
    commit.save()
    return False


def _decision_set(commit: BisectionCommit, decision: StepDecision) -> None:
    commit.verdict = BisectionCommit.Verdict(decision.verdict.value)
    commit.position_value, commit.low, commit.high = decision.position, decision.low, decision.high
    commit.reason = decision.reason


def _next(bisection: Bisection, commits: list[BisectionCommit]) -> None:
    """Search on with the verdicts so far: queue the next commit, or end."""
    tried = sorted((c for c in commits if c.step is not None), key=lambda c: c.step or 0)
    outcome = next_step(
        [Commit(c.sha, tuple(c.parents)) for c in commits],
        bad=[c.sha for c in tried if c.verdict == BisectionCommit.Verdict.BAD],
        good={c.sha for c in commits if c.verdict == BisectionCommit.Verdict.GOOD},
        skipped={c.sha for c in commits if c.verdict == BisectionCommit.Verdict.SKIPPED},
    )
    if isinstance(outcome, Found):
        culprit = next(c for c in commits if c.sha == outcome.sha)
        bisection.culprit = outcome.sha
        _end(
            bisection,
            Bisection.State.FOUND,
            f"the first bad commit is {outcome.sha[:12]} {culprit.subject}",
        )
        return
    if isinstance(outcome, Narrowed):
        shas = ", ".join(sha[:12] for sha in outcome.shas)
        _end(
            bisection, Bisection.State.NARROWED, f"{outcome.reason}; the first bad is one of {shas}"
        )
        return
    commit = next(c for c in commits if c.sha == outcome.sha)
    if commit.step is not None:  # the search never offers a commit twice; never loop on one
        raise RangeError(f"{commit.sha[:12]} was offered again after its verdict")
    commit.step = max((c.step or 0) for c in tried) + 1 if tried else 1
    commit.save(update_fields=["step"])
    why = f"step {commit.step}, {outcome.remaining} candidates left"
    _queue(bisection, [commit.sha], repeats=bisection.repeats, why=why)


def _end(bisection: Bisection, state: str, message: str) -> None:
    bisection.state = state
    bisection.message = message[:5000]
    bisection.finished_at = timezone.now()
    bisection.save(update_fields=["state", "message", "culprit", "finished_at"])


# --- cancel ------------------------------------------------------------------------------------


def bisection_cancel(*, bisection_id: int, actor: str, by: Any = None) -> Bisection:
    """Cancel a bisection that has not ended, and its jobs that have not. `by` must have started
    it or may run jobs on its host: HostForbidden (403) otherwise; None is the operator.
    BisectionError `bisection_state` (409) when it has ended."""
    with transaction.atomic():
        bisection = Bisection.objects.select_for_update().filter(pk=bisection_id).first()
        if bisection is None:
            raise BisectionError("not_found", f"No bisection {bisection_id}.", status=404)
        person = _person(by)
        if person is not None and not person.is_staff and bisection.created_by_id != person.pk:
            job_target_check(person=person, host=bisection.host, host_tags=[])
        if bisection.state not in Bisection.OPEN:
            raise BisectionError(
                "bisection_state",
                f"Bisection {bisection_id} is already {bisection.state}.",
                status=409,
            )
        for job_id in bisection.jobs.exclude(state__in=Job.FINAL).values_list("pk", flat=True):
            job_cancel(job_id=job_id, actor=actor)
        _end(bisection, Bisection.State.CANCELLED, f"cancelled by {actor}")
    return bisection
