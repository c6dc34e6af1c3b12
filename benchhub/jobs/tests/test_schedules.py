"""Recurring jobs through Celery beat's database-backed schedules."""

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django_celery_beat.models import PeriodicTask
from rest_framework.test import APIClient

from benchhub.jobs.models import Job, JobSchedule
from benchhub.jobs.services import schedule_fire
from benchhub.jobs.tests.test_queue import JOB


def test_it_stores_a_nightly_schedule_that_beat_reads(bob):
    client = APIClient()
    client.force_login(bob)
    response = client.post(
        "/api/v1/schedules/",
        {"name": "nightly-13-vs-14", "crontab": "0 2 * * *", "template": JOB},
        format="json",
    )
    assert response.status_code == 201, response.content
    schedule = JobSchedule.objects.get(name="nightly-13-vs-14")
    task = PeriodicTask.objects.get(pk=schedule.periodic_task_id)
    assert task.task == "jobs.schedule_fire" and task.enabled
    assert (task.crontab.minute, task.crontab.hour) == ("0", "2")
    job = schedule_fire(schedule_id=schedule.pk)
    assert (job.state, job.schedule_id, job.versions) == ("queued", schedule.pk, ["13", "14"])
    assert client.delete(f"/api/v1/schedules/{schedule.pk}/").status_code == 204
    assert not PeriodicTask.objects.filter(pk=task.pk).exists()


def test_it_refuses_a_bad_crontab(bob):
    client = APIClient()
    client.force_login(bob)
    response = client.post(
        "/api/v1/schedules/", {"name": "x", "crontab": "nightly", "template": JOB}, format="json"
    )
    assert "crontab" in response.json()["fields"]


def test_it_queues_a_job_from_the_command_line(db, capsys):
    call_command(
        "job_create",
        "--versions",
        "13",
        "14",
        "--builtin",
        "select-only",
        "--scale",
        "1",
        "--clients",
        "1",
        "2",
        "--duration",
        "2",
        "--set",
        "shared_buffers=256MB",
    )
    job_id = int(capsys.readouterr().out.strip())
    job = Job.objects.get(pk=job_id)
    assert job.config_overrides == {"shared_buffers": "256MB"}
    assert job.workload["builtin"] == "select-only"


def test_it_queues_a_job_read_as_json_from_stdin(db, capsys, monkeypatch):
    """Found by mypy: `--json -` read a `self.stdin` that commands do not have."""
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(JOB)))
    call_command("job_create", "--json", "-")
    job = Job.objects.get(pk=int(capsys.readouterr().out.strip()))
    assert job.versions == JOB["versions"] and job.workload["builtin"] == JOB["workload"]["builtin"]


def test_it_queues_a_catalog_workload_from_the_command_line(db, capsys):
    call_command(
        "job_create",
        "--versions",
        "16",
        "17",
        "--catalog",
        "e4-write-consume",
        "--param",
        "partitions=8",
        "--param",
        "batch=50",
        "--duration",
        "5",
    )
    job = Job.objects.get(pk=int(capsys.readouterr().out.strip()))
    assert job.workload["params"]["partitions"] == 8 and job.workload["catalog_entry"]
    assert (job.clients, job.duration_s, job.repeats) == ([4], 5, 1)
    with pytest.raises(CommandError, match=r"params\.batch"):
        call_command(
            "job_create",
            "--versions",
            "17",
            "--catalog",
            "e4-write-consume",
            "--param",
            "batch=lots",
        )
