"""No request takes the queue down: crontabs beat cannot parse are refused at the edge, beat and
the lease sweep survive a bad row, and heartbeat, finish and release speak for the live attempt."""

import logging
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from django_celery_beat.models import CrontabSchedule, PeriodicTask
from rest_framework.test import APIClient

from benchhub.accounts.tokens import token_split
from benchhub.celery import app as celery_app
from benchhub.hosts.access import ALL_HOSTS
from benchhub.hosts.models import HostGrant, RunnerToken
from benchhub.jobs.beat import SafeDatabaseScheduler
from benchhub.jobs.models import Job, JobSchedule
from benchhub.jobs.services import job_claim, job_create, jobs_expire_leases, schedule_save
from benchhub.jobs.tests.test_queue import JOB


@pytest.fixture
def bob_client(bob) -> APIClient:
    client = APIClient()
    client.force_login(bob)
    return client


@pytest.mark.parametrize(
    ("crontab", "field"),
    [
        ("* * * * ,", "day_of_week"),
        ("61 * * * *", "minute"),
        ("* 24 * * *", "hour"),
        ("*/0 * * * *", "minute"),
        ("* * 0 * *", "day_of_month"),
        ("* * * 13 *", "month_of_year"),
        ("* * * * 1-", "day_of_week"),
    ],
)
def test_it_refuses_a_crontab_celery_cannot_parse_naming_the_field(bob_client, crontab, field):
    body = {"name": "n", "crontab": crontab, "template": JOB}
    response = bob_client.post("/api/v1/schedules/", body, format="json")
    assert response.status_code == 400, response.content
    message = response.json()["fields"]["crontab"][0]
    assert field in message
    assert (
        not JobSchedule.objects.exists()
        and not PeriodicTask.objects.filter(task="jobs.schedule_fire").exists()
    )


def test_it_keeps_beat_going_past_a_schedule_row_it_cannot_parse(db, bob, caplog):
    # Every hour: beat only loads crontab tasks due within a couple of hours.
    good = schedule_save(name="good", crontab="*/5 * * * *", template=JOB, created_by=bob)
    bad_cron = CrontabSchedule.objects.create(
        minute="*", hour="*", day_of_week=",", day_of_month="*", month_of_year="*"
    )
    PeriodicTask.objects.create(name="hand-made", task="jobs.schedule_fire", crontab=bad_cron)
    scheduler = SafeDatabaseScheduler(app=celery_app, lazy=True)
    with caplog.at_level(logging.ERROR, logger="benchhub.jobs.beat"):
        entries = scheduler.all_as_schedule()
    assert f"benchhub job schedule {good.pk}" in entries
    assert "hand-made" not in entries
    assert "hand-made" in caplog.text


def _claimed(agent, job: Job) -> Job:
    token = RunnerToken.objects.get(prefix=token_split(agent.token)[1])
    claimed = job_claim(token=token)
    assert claimed is not None and claimed.pk == job.pk
    return claimed


def test_it_expires_every_other_lease_when_one_job_cannot_be_requeued(db, agent):
    jobs = [job_create(actor="test", **{**JOB, "versions": ["15"]}) for _ in range(3)]
    Job.objects.filter(pk__in=[j.pk for j in jobs]).update(
        state=Job.State.RUNNING,
        attempt=1,
        claimed_by=RunnerToken.objects.get(prefix=token_split(agent.token)[1]),
        lease_expires_at=timezone.now() - timedelta(seconds=5),
        progress={"stage": "s" * 500},  # from before the heartbeat checked it
    )
    bad = jobs[1].pk
    with connection.cursor() as cursor:
        # One row the database refuses to update, whatever the sweep writes.
        cursor.execute(
            "CREATE FUNCTION refuse_job() RETURNS trigger AS $$ BEGIN "
            "RAISE EXCEPTION 'refused'; END $$ LANGUAGE plpgsql; "
            f"CREATE TRIGGER refuse_job BEFORE UPDATE ON jobs_job FOR EACH ROW "
            f"WHEN (OLD.id = {bad}) EXECUTE FUNCTION refuse_job();"
        )
    try:
        assert jobs_expire_leases() == 2
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER refuse_job ON jobs_job; DROP FUNCTION refuse_job();")
    states = dict(Job.objects.values_list("pk", "state"))
    assert states[bad] == Job.State.RUNNING
    assert [states[j.pk] for j in (jobs[0], jobs[2])] == [Job.State.QUEUED] * 2


def test_it_refuses_a_heartbeat_stage_longer_than_its_column(db, agent):
    job = _claimed(agent, job_create(actor="test", **JOB))
    response = agent.client.post(
        f"/api/v1/jobs/{job.pk}/heartbeat/", {"progress": {"stage": "x" * 51}}, format="json"
    )
    assert response.status_code == 400
    assert "progress.stage" in response.json()["fields"]


@pytest.mark.parametrize(
    ("action", "body"),
    [
        ("heartbeat", {"progress": {}}),
        ("finish", {"outcome": "failed", "stage": "run", "message": "x"}),
        ("release", {"reason": "stop"}),
    ],
)
def test_it_refuses_a_stale_attempt_with_409(db, agent, action, body):
    job = _claimed(agent, job_create(actor="test", **JOB))
    stale = agent.client.post(
        f"/api/v1/jobs/{job.pk}/{action}/", {**body, "attempt": job.attempt + 1}, format="json"
    )
    assert stale.status_code == 409 and stale.json()["error"] == "stale_attempt"
    live = agent.client.post(
        f"/api/v1/jobs/{job.pk}/{action}/", {**body, "attempt": job.attempt}, format="json"
    )
    assert live.status_code == 200


def test_it_keeps_a_schedule_with_its_owner_when_someone_else_posts_its_name(bob, mallory):
    schedule = schedule_save(name="nightly", crontab="0 2 * * *", template=JOB, created_by=bob)
    HostGrant.objects.create(tag=ALL_HOSTS, user=mallory)  # may queue: the name is the issue
    other = APIClient()
    other.force_login(mallory)
    body = {"name": "nightly", "crontab": "* * * * *", "template": JOB}
    taken = other.post("/api/v1/schedules/", body, format="json")
    assert taken.status_code == 403 and taken.json()["error"] == "forbidden_schedule"
    assert "nightly" in taken.json()["detail"] and "name" in taken.json()["fields"]
    schedule.refresh_from_db()
    assert (schedule.crontab, schedule.created_by) == ("0 2 * * *", bob)
    assert other.delete(f"/api/v1/schedules/{schedule.pk}/").status_code == 403
    assert JobSchedule.objects.filter(pk=schedule.pk).exists()
