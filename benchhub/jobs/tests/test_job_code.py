"""Queueing refuses job code that would reach beyond the throwaway server
(benchhub_runner.jobcode.checker): a 400 that names the field and the line, and nothing stored."""

from typing import Any

import pytest
from rest_framework.test import APIClient

from benchhub.jobs.models import Job, JobSchedule

JOB: dict[str, Any] = {
    "versions": ["14"],
    "workload": {"name": "select-only", "builtin": "select-only", "query_mode": "prepared"},
    "scale": 1,
    "clients": [1],
    "duration_s": 2,
}


@pytest.fixture
def staff_client(alice):
    client = APIClient()
    client.force_login(alice)
    return client


def with_workload(**fields):
    return {**JOB, "workload": {**JOB["workload"], **fields}}


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        (
            with_workload(setup=["CREATE TABLE t (a int)", "SELECT 1;\n\\! id > /srv/owned"]),
            "workload.setup[1]",
            "line 2: psql meta-command \\!",
        ),
        (
            with_workload(level_setup=["COPY t TO PROGRAM 'id'"]),
            "workload.level_setup[0]",
            "line 1: COPY ... PROGRAM",
        ),
        (
            with_workload(builtin="", scripts=[{"name": "s", "body": "\\shell id\nSELECT 1;"}]),
            "workload.scripts[0].body",
            "line 1: pgbench \\shell",
        ),
        (
            with_workload(
                builtin="",
                streams=[
                    {"name": "m", "scripts": [{"name": "s", "body": "SELECT 1;\n\\setshell x id"}]}
                ],
            ),
            "workload.streams[0].scripts[0].body",
            "line 2: pgbench \\setshell",
        ),
        (with_workload(options=["-n", "--log"]), "workload.options[1]", "writes a log file"),
        (
            {**JOB, "config_overrides": {"archive_command": "id > /srv/owned"}},
            "config_overrides.archive_command",
            "runs a shell command",
        ),
        (
            {**JOB, "config_overrides": {"shared_preload_libraries": "evil"}},
            "config_overrides.shared_preload_libraries",
            "loads a shared library",
        ),
        (
            {**JOB, "config_overrides": {"plperl.on_init": "system('id')"}},
            "config_overrides.plperl.on_init",
            "runs code when the server starts an interpreter",
        ),
        (
            {**JOB, "config_overrides": {"shared_buffers": "64MB", "cluster_name": "x"}},
            "config_overrides.cluster_name",
            "is not one a job may override",
        ),
    ],
)
def test_it_refuses_to_queue_job_code_naming_the_field_and_line(staff_client, body, field, words):
    response = staff_client.post("/api/v1/jobs/", body, format="json")
    assert response.status_code == 400, response.json()
    fields = response.json()["fields"]
    assert field in fields, fields
    assert words in " ".join(fields[field])
    assert Job.objects.count() == 0


def test_it_refuses_a_schedule_whose_template_brings_a_shell_command(staff_client):
    template = with_workload(setup=["\\! id"])
    response = staff_client.post(
        "/api/v1/schedules/",
        {"name": "nightly", "crontab": "0 2 * * *", "template": template},
        format="json",
    )
    assert response.status_code == 400
    assert "template.workload.setup[0]" in response.json()["fields"]
    assert JobSchedule.objects.count() == 0


def test_it_queues_plain_sql_with_backslashes_in_strings_and_comments(staff_client):
    body = with_workload(
        setup=["CREATE TABLE t (a text); -- \\! not run\nINSERT INTO t VALUES ('\\! a string')"],
        options=["-n", "-R", "100"],
    )
    body["config_overrides"] = {"shared_buffers": "64MB"}
    response = staff_client.post("/api/v1/jobs/", body, format="json")
    assert response.status_code == 201, response.json()
