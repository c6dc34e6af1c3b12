"""The plan (benchhub_runner.jobspec.plan) is the one source of a job's measurement fields: the
API's serializer, the model's choices, the form, `manage.py job_create` and "again" derive from it,
and every entry point gives a field the same default."""

from io import StringIO

from benchhub_runner.jobspec import plan
from django.core.management import call_command

from benchhub.dashboard.forms import JobForm
from benchhub.jobs.models import Job
from benchhub.jobs.serializers import JobInSerializer, JobOutSerializer
from benchhub.jobs.services import JOB_DEFINITION_FIELDS
from benchhub.workloads.models import Workload

CUSTOM = {"name": "select-only", "builtin": "select-only"}


def test_it_takes_the_model_choices_from_the_plan_enums():
    assert Job.Threads.values == [m.value for m in plan.ThreadsPolicy]
    assert Job.Order.values == [m.value for m in plan.Order]
    assert Job.LevelOrder.values == [m.value for m in plan.LevelOrder]
    assert Workload.QueryMode.values == [m.value for m in plan.QueryMode]
    assert Workload.Combine.values == [m.value for m in plan.Combine]


def test_it_has_one_api_field_per_plan_field_in_and_out():
    fields = JobInSerializer().fields
    assert set(plan.PLAN_FIELDS) <= set(fields)
    assert set(plan.PLAN_FIELDS) <= set(JobOutSerializer.Meta.fields)
    assert set(plan.PLAN_FIELDS) <= set(JOB_DEFINITION_FIELDS)
    assert getattr(fields["warmup_s"], "max_value", None) == plan.MAX_WARMUP_S
    assert fields["repeats"].default == plan.plan_default("repeats") == 1


def test_it_applies_the_plan_defaults_to_an_api_request(db):
    body = JobInSerializer(data={"versions": ["14"], "workload": CUSTOM, "clients": [2, 4]})
    assert not body.is_valid()  # neither a duration nor a transaction count
    assert list(body.errors) == ["duration_s"]
    body = JobInSerializer(
        data={"versions": ["14"], "workload": CUSTOM, "clients": [2, 4], "duration_s": 100}
    )
    assert body.is_valid(), body.errors
    data = body.validated_data
    assert data["repeats"] == 1 and data["workload"]["query_mode"] == "simple"
    assert data["warmup_s"] == plan.warmup_default(100) == 10.0
    assert (data["level_order"], data["shuffle_seed"]) == ("given", None)


def test_it_checks_the_plan_rules_the_agent_checks(db):
    body = JobInSerializer(
        data={
            "versions": ["14"],
            "workload": CUSTOM,
            "clients": [2, 4],
            "duration_s": 10,
            "threads_policy": "pairs",
            "level_threads": {"2": 2},
            "config_overrides": {"max_connections": "lots"},
        }
    )
    assert not body.is_valid()
    assert "no threads for [4]" in str(body.errors["level_threads"])
    assert "whole number" in str(body.errors["config_overrides.max_connections"])


def test_it_gives_the_form_and_the_command_the_api_defaults(db):
    form = JobForm(data={"versions": "14", "order": "interleaved", "priority": "0"})
    assert form.is_valid(), form.errors
    request = form.job_request()
    assert request["workload"]["query_mode"] == plan.QUERY_MODE_DEFAULT
    body = JobInSerializer(data=request)
    assert body.is_valid(), body.errors
    assert body.validated_data["repeats"] == plan.plan_default("repeats")
    out = StringIO()
    call_command("job_create", "--versions", "14", "--clients", "2", "--duration", "5", stdout=out)
    job = Job.objects.get(pk=int(out.getvalue()))
    assert job.repeats == plan.plan_default("repeats")
    assert job.workload["query_mode"] == plan.QUERY_MODE_DEFAULT
