"""A running job's expected end: its remaining steps at the pace of the steps done since it
started running; nothing before that pace is known."""

from datetime import UTC, datetime, timedelta

from benchhub.jobs.models import Job
from benchhub.jobs.selectors import job_expected_end

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)


def job(state: str = "running", started: timedelta | None = timedelta(minutes=2), **progress):
    return Job(state=state, started_at=NOW - started if started else None, progress=progress)


def test_it_expects_the_remaining_steps_at_the_pace_so_far():
    assert job_expected_end(job=job(step=2, steps=8), now=NOW) == NOW + timedelta(minutes=6)
    assert job_expected_end(job=job(step=8, steps=8), now=NOW) == NOW


def test_it_expects_nothing_before_a_step_is_done_or_of_a_job_not_running():
    assert job_expected_end(job=job(step=0, steps=8), now=NOW) is None
    assert job_expected_end(job=job(stage="provisioning"), now=NOW) is None
    assert job_expected_end(job=job(step=9, steps=8), now=NOW) is None
    assert job_expected_end(job=job(step="2", steps=8), now=NOW) is None
    assert job_expected_end(job=job(state="claimed", step=2, steps=8), now=NOW) is None
    assert job_expected_end(job=job(started=None, step=2, steps=8), now=NOW) is None
