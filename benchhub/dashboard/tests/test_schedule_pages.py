"""The schedules page: every schedule with its next run and latest jobs, pause and resume
(which beat follows), the edit form, and the schedule API's rule that only a schedule's
creator or staff change it."""

import json
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from benchhub.celery import app as celery_app
from benchhub.jobs.beat import SafeDatabaseScheduler
from benchhub.jobs.models import JobSchedule
from benchhub.jobs.selectors import schedule_list
from benchhub.jobs.services import schedule_fire, schedule_save
from benchhub.jobs.tests.test_queue import JOB
from benchhub.results.models import Run
from benchhub.testing.payloads import run_payload


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def nightly(bob) -> JobSchedule:
    return schedule_save(name="nightly", crontab="30 2 * * *", template=JOB, created_by=bob)


def test_it_lists_each_schedule_with_its_next_run_and_latest_jobs(nightly, agent, client):
    fired = schedule_fire(schedule_id=nightly.pk)
    for version in ("13.3", "14.23"):
        payload = run_payload(version=version)
        assert agent.client.post("/api/v1/runs/", payload, format="json").status_code == 201
    Run.objects.update(job=fired, job_attempt=fired.attempt)
    runs = ",".join(str(u) for u in Run.objects.order_by("id").values_list("uuid", flat=True))
    page = client.get("/schedules/").content.decode()
    row = re.search(r'<tr id="schedule-\d+">.*?</tr>', page, re.S).group(0)
    now = timezone.now()
    after = now.replace(hour=2, minute=30, second=0, microsecond=0)
    if after <= now:
        after += timedelta(days=1)
    assert f"{after:%Y-%m-%d} 02:30" in row and "30 2 * * *" in row
    assert f'href="/jobs/{fired.pk}/"' in row and "queued" in row
    assert f"/compare/?runs={runs}" in row
    assert ">enabled<" in row and "Pause" not in row  # anonymous: nothing to press
    assert 'href="/schedules/"' in page  # the nav links here


def test_it_lists_schedules_and_their_jobs_in_a_fixed_number_of_queries(
    bob, django_assert_num_queries
):
    for n in range(3):
        schedule = schedule_save(name=f"s{n}", crontab="0 * * * *", template=JOB, created_by=bob)
        for _ in range(7):
            schedule_fire(schedule_id=schedule.pk)
    with django_assert_num_queries(3):  # schedules, their jobs, the jobs' runs with builds
        rows = schedule_list(now=timezone.now())
    assert [len(row.jobs) for row in rows] == [5, 5, 5]


def test_pausing_stops_beat_firing_the_schedule_and_resuming_brings_it_back(bob):
    # Every five minutes: beat loads only crontab tasks due within a couple of hours.
    nightly = schedule_save(name="nightly", crontab="*/5 * * * *", template=JOB, created_by=bob)
    owner = _client(bob)
    entry = f"benchhub job schedule {nightly.pk}"
    assert entry in SafeDatabaseScheduler(app=celery_app, lazy=True).all_as_schedule()
    page = owner.get("/schedules/").content.decode()
    assert f'action="/schedules/{nightly.pk}/enable/"' in page and ">Pause<" in page
    done = owner.post(f"/schedules/{nightly.pk}/enable/", {"enabled": "0"}, follow=True)
    assert "Schedule nightly paused." in done.content.decode()
    nightly.refresh_from_db()
    assert not nightly.enabled and not PeriodicTask.objects.get(name=entry).enabled
    assert entry not in SafeDatabaseScheduler(app=celery_app, lazy=True).all_as_schedule()
    assert schedule_fire(schedule_id=nightly.pk) is None
    row = re.search(r'<tr id="schedule-\d+">.*?</tr>', done.content.decode(), re.S).group(0)
    assert ">paused<" in row and ">Resume<" in row and '<td class="next-run">\u2013</td>' in row
    owner.post(f"/schedules/{nightly.pk}/enable/", {"enabled": "1"})
    assert entry in SafeDatabaseScheduler(app=celery_app, lazy=True).all_as_schedule()


def test_it_refuses_pausing_or_editing_someone_elses_schedule(nightly, mallory):
    other = _client(mallory)
    page = other.get("/schedules/").content.decode()
    assert "Pause" not in page and "/edit/" not in page
    done = other.post(f"/schedules/{nightly.pk}/enable/", {"enabled": "0"}, follow=True)
    assert "belongs to someone else" in done.content.decode()
    assert other.get(f"/schedules/{nightly.pk}/edit/").status_code == 403
    body = {"crontab": "* * * * *", "template": "{}"}
    assert other.post(f"/schedules/{nightly.pk}/edit/", body).status_code == 403
    nightly.refresh_from_db()
    assert nightly.enabled and nightly.crontab == "30 2 * * *"


def test_staff_may_pause_anyones_schedule(nightly, alice):
    _client(alice).post(f"/schedules/{nightly.pk}/enable/", {"enabled": "0"})
    nightly.refresh_from_db()
    assert not nightly.enabled


def test_the_edit_form_saves_through_the_schedule_api_rules(nightly, bob):
    owner = _client(bob)
    form = owner.get(f"/schedules/{nightly.pk}/edit/").content.decode()
    assert "30 2 * * *" in form and "select-only" in form
    bad = owner.post(
        f"/schedules/{nightly.pk}/edit/",
        {"crontab": "61 * * * *", "template": '{"versions": ["13"], "clients": [0]}'},
    )
    assert bad.status_code == 200
    text = bad.content.decode()
    assert "minute" in text and "template.clients" in text
    good = json.dumps({**JOB, "versions": ["15"]})
    done = owner.post(f"/schedules/{nightly.pk}/edit/", {"crontab": "0 4 * * 1", "template": good})
    assert done.status_code == 302, done.content.decode()
    assert done["Location"] == "/schedules/"
    nightly.refresh_from_db()
    assert (nightly.crontab, nightly.template["versions"]) == ("0 4 * * 1", ["15"])
    task = PeriodicTask.objects.get(pk=nightly.periodic_task_id)
    assert (task.crontab.hour, task.crontab.day_of_week) == ("4", "1")
