"""Validation of job requests, heartbeats and finishes; shapes of jobs as the API returns them."""

import copy
import re
from typing import Any, ClassVar

from benchhub_runner.jobcode.checker import job_code_check
from benchhub_runner.jobcode.refusals import Refusal
from benchhub_runner.jobcode.settings import check_settings
from benchhub_runner.jobspec.plan import (
    CLIENT_CONFIGURED,
    MAX_LEVELS,
    PLAN_FIELDS,
    PLAN_SPECS,
    plan_method,
    plan_problems,
)
from benchhub_runner.servers.tablespaces import TABLESPACE_NAME, TABLESPACE_NAME_RULE
from celery.schedules import ParseException
from celery.schedules import crontab as celery_crontab
from django.db import models
from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from benchhub.api.fields import HostTagsField, StrictCharField, StrictIntegerField
from benchhub.api.plan_fields import plan_field
from benchhub.api.serializers import InSerializer
from benchhub.builds.selectors import recipe_names_among
from benchhub.builds.versions import VersionError, version_parse
from benchhub.hosts.fields import HostNameField
from benchhub.jobs.models import Job, JobEvent, JobSchedule
from benchhub.jobs.selectors import job_expected_end
from benchhub.workloads.catalog import catalog_job_request
from benchhub.workloads.serializers import JobWorkloadInSerializer

GUC_NAME = re.compile(r"^[a-z_][a-z0-9_.]{0,62}$")
__all__ = ["CLIENT_CONFIGURED", "MAX_LEVELS"]


CRONTAB_FIELDS = ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")


def crontab_check(value: str) -> str:
    """The crontab normalised, or a ValidationError naming the bad field.

    Parsed by celery's own crontab parser, the one beat uses: anything it accepts here beat can
    schedule, and anything it refuses never reaches beat (where it stopped the scheduler)."""
    fields = value.split()
    if len(fields) != 5:
        raise serializers.ValidationError(
            "Five crontab fields (minute hour day month weekday), e.g. '0 2 * * *'."
        )
    for name, field in zip(CRONTAB_FIELDS, fields, strict=True):
        if not re.fullmatch(r"[0-9A-Za-z*/,\-]{1,30}", field):
            raise serializers.ValidationError(f"The {name} field {field!r} is not a crontab field.")
        try:
            celery_crontab(**{name: field})
        except (ParseException, ValueError, IndexError) as exc:
            raise serializers.ValidationError(
                f"The {name} field {field!r} is not valid: {exc}"[:300]
            ) from None
    return " ".join(fields)


def _check_version(value: str) -> str:
    try:
        version_parse(value)
    except VersionError as exc:
        raise serializers.ValidationError(str(exc)) from None
    return value.strip()


def _check_tablespace(value: str) -> str:
    if not TABLESPACE_NAME.match(value):
        raise serializers.ValidationError(f"{value!r}: {TABLESPACE_NAME_RULE}.")
    return value


def _choices(name: str) -> list[Any] | None:
    """A choice field's choices: the Job column's (their labels are the schema's)."""
    column = Job._meta.get_field(name)
    return list(column.choices or []) if isinstance(column, models.Field) else None


class PlanInSerializer(InSerializer):
    """A request's plan: one field per plan field, made from the plan's specs."""

    def get_fields(self) -> dict[str, serializers.Field]:
        plan = {
            name: plan_field(name, spec, choices=_choices(name))
            for name, spec in PLAN_SPECS.items()
        }
        return {**plan, **super().get_fields()}


class JobInSerializer(PlanInSerializer):
    versions = serializers.ListField(
        child=StrictCharField(max_length=100, validators=[_check_version]),
        min_length=1,
        max_length=16,
    )
    workload = JobWorkloadInSerializer()
    host = HostNameField(required=False, allow_null=True)
    host_tags = HostTagsField(
        required=False,
        default=list,
        help_text="or any host that offers all these tags (its agent's `tags`), when no host is "
        "named",
    )
    tablespaces = serializers.ListField(
        child=StrictCharField(max_length=63, validators=[_check_tablespace]),
        required=False,
        default=list,
        max_length=8,
        help_text="tablespaces the agent creates on each server, named as the host's agent "
        "configuration maps them to directories; pgbench -i puts its tables in the first and its "
        "indexes in the last",
    )
    priority = StrictIntegerField(min_value=-1000, max_value=1000, default=0)
    aa = serializers.BooleanField(
        default=False,
        help_text="A/A: run the one version given twice, as two separate series (two runs), "
        "so that their comparison measures the host's noise",
    )
    max_attempts = StrictIntegerField(min_value=1, max_value=10, default=3)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        # A workload named by catalog id becomes its definition (and omitted job fields the
        # entry's defaults) first, so it is validated exactly like one written out in full.
        return super().to_internal_value(catalog_job_request(data))

    def validate_client(self, value: str) -> str:
        value = value.strip()
        if value in ("", CLIENT_CONFIGURED):
            return value
        return _check_version(value)

    def validate_config_overrides(self, value: dict[str, str]) -> dict[str, str]:
        bad = [name for name in value if not GUC_NAME.match(name)]
        if bad:
            raise serializers.ValidationError(f"Not setting names: {', '.join(bad[:5])}.")
        _refuse_job_code(check_settings(value, field="config_overrides"), "config_overrides.")
        return value

    def validate_workload(self, value: dict[str, Any]) -> dict[str, Any]:
        # The agent checks again before it runs the job (unless its host trusts job code).
        _refuse_job_code(job_code_check(workload=value, config_overrides={}), "workload.")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        errors = plan_problems(attrs)
        if attrs.get("aa"):
            if len(set(attrs["versions"])) != 1:
                errors["versions"] = "An A/A job names exactly one version."
            else:
                attrs["versions"] = [attrs["versions"][0]] * 2
        elif len(set(attrs["versions"])) != len(attrs["versions"]):
            errors["versions"] = "Versions must be unique."
        elif unbuildable := _builds_without_recipe(attrs["versions"]):
            errors["versions"] = (
                f"{', '.join(unbuildable)}: a commit, a snapshot date, a patch or master names a "
                "build, and no recipe has that name; define one first (/recipes/)."
            )
        errors.update(_check_tablespaces(attrs))
        if errors:
            raise serializers.ValidationError(errors)
        # The warm-up and the shuffle seed are decided once and stored on the job, so the
        # claim, the runs and a rerun all carry the same numbers.
        attrs["warmup_s"], attrs["shuffle_seed"] = plan_method(
            duration_s=attrs.get("duration_s"),
            warmup_s=attrs.get("warmup_s"),
            level_order=attrs["level_order"],
            seed=attrs.get("shuffle_seed"),
        )
        return attrs


def _check_tablespaces(attrs: dict[str, Any]) -> dict[str, str]:
    """Unique names, and on a named host only those its agent offers (known from its last
    claim; a job for tags waits for a host that offers them all)."""
    names, host = attrs.get("tablespaces") or [], attrs.get("host")
    if len(set(names)) != len(names):
        return {"tablespaces": "Tablespace names must be unique."}
    missing = [name for name in names if host is not None and name not in host.tablespaces]
    if host is not None and missing:
        offered = ", ".join(host.tablespaces) or "none"
        return {
            "tablespaces": f"Host {host.name} does not offer {', '.join(missing)} (it offers: "
            f"{offered}; the host owner maps names to directories in the agent's configuration)."
        }
    return {}


def _refuse_job_code(refusals: list[Refusal], prefix: str) -> None:
    """What the job-code checker (benchhub_runner.jobcode.checker) refused, as field errors under
    the field being validated: `workload.setup[1]: line 2: psql meta-command \\! ...`."""
    if not refusals:
        return
    errors: dict[str, list[str]] = {}
    for refusal in refusals:
        errors.setdefault(refusal.field.removeprefix(prefix), []).append(refusal.message)
    raise serializers.ValidationError(errors)


# Which attempt of the job the agent is working on (from its claim). Optional so that agents
# older than the check keep working; one that sends it is refused (409 `stale_attempt`) when its
# attempt is no longer the live one.
def _attempt_field() -> StrictIntegerField:
    return StrictIntegerField(
        min_value=1, required=False, help_text="the attempt from the claim; checked when given"
    )


STAGE_MAX: int = Job._meta.get_field("failure_stage").max_length or 50


def _builds_without_recipe(versions: list[str]) -> list[str]:
    """Versions only a build can be that no recipe defines (one query)."""
    builds = [v for v in versions if version_parse(v).needs_build]
    if not builds:
        return []
    recipes = recipe_names_among(names=builds)
    return [v for v in builds if v.strip().lower() not in recipes]


# Tablespace names a host may offer: each claim stores them on the host (Host.tablespaces) and
# its page lists them, so the offer is bounded at the edge in count as each name is in length
# (a 400 naming `tablespaces`, or `tablespaces[i]`, and nothing stored).
MAX_OFFERED_TABLESPACES = 100


class ClaimInSerializer(InSerializer):
    tablespaces = serializers.ListField(
        child=StrictCharField(max_length=63, validators=[_check_tablespace]),
        required=False,
        default=list,
        max_length=MAX_OFFERED_TABLESPACES,
        help_text="the tablespace names the agent's host offers (its [tablespaces] config)",
    )
    # Absent (an agent whose configuration names no tags, or one older than tags): the host
    # keeps the tags it has.
    tags = HostTagsField(
        required=False,
        help_text="the host's tags (its agent's `tags`), stored on the host: only jobs whose "
        "host_tags are all among them are given; absent, the host keeps the tags it has",
    )


class HeartbeatInSerializer(InSerializer):
    progress = serializers.DictField(required=False, default=dict)
    attempt = _attempt_field()

    def validate_progress(self, value: dict[str, Any]) -> dict[str, Any]:
        if len(str(value)) > 20000:
            raise serializers.ValidationError("Progress is limited to 20000 characters.")
        stage = value.get("stage")
        # The stage is what a lapsed lease records as the job's failure_stage (a bounded column).
        if stage is not None and (not isinstance(stage, str) or len(stage) > STAGE_MAX):
            raise serializers.ValidationError(
                {"stage": f"A stage is a string of at most {STAGE_MAX} characters."}
            )
        return value


class FinishInSerializer(InSerializer):
    outcome = serializers.ChoiceField(choices=[Job.State.DONE, Job.State.FAILED])
    attempt = _attempt_field()
    stage = StrictCharField(max_length=STAGE_MAX, required=False, allow_blank=True, default="")
    message = StrictCharField(max_length=20000, required=False, allow_blank=True, default="")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["outcome"] == Job.State.FAILED and not attrs["stage"]:
            raise serializers.ValidationError({"stage": "A failure names its stage."})
        return attrs


class ReleaseInSerializer(InSerializer):
    attempt = _attempt_field()
    reason = StrictCharField(
        max_length=2000, required=False, allow_blank=True, default="the agent stopped"
    )


class JobEventOutSerializer(serializers.ModelSerializer):
    class Meta:
        model = JobEvent
        fields = ["at", "kind", "attempt", "actor", "message"]


class JobOutSerializer(serializers.ModelSerializer):
    host = serializers.CharField(source="host.name", allow_null=True, default=None)
    claimed_host = serializers.CharField(source="claimed_host.name", allow_null=True, default=None)
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)
    runs = serializers.SerializerMethodField()

    class Meta:
        model = Job
        fields = [
            "id",
            "state",
            "versions",
            "workload",
            *PLAN_FIELDS,
            "aa",
            "host",
            "host_tags",
            "tablespaces",
            "priority",
            "max_attempts",
            "attempt",
            "created_at",
            "created_by",
            "claimed_host",
            "claimed_at",
            "started_at",
            "finished_at",
            "lease_expires_at",
            "last_heartbeat_at",
            "progress",
            "failure_stage",
            "failure_message",
            "runs",
        ]

    def get_runs(self, job: Job) -> list[str]:
        claimed = getattr(job, "run_uuids", None)  # a claim reads them along (jobs.services)
        if claimed is not None:
            return claimed
        return [str(run.uuid) for run in job.runs.all()]


class JobClaimOutSerializer(JobOutSerializer):
    """The claim response: the job, and the build spec of each version that names a recipe
    (docs/runner-api.md, "Builds in a claim")."""

    builds = serializers.JSONField(help_text="version name -> build spec, patches inline")
    bisect_range = serializers.JSONField(
        required=False,
        help_text='a bisection\'s listing job only: {"url", "good", "bad"} (docs/runner-api.md)',
    )

    class Meta(JobOutSerializer.Meta):
        fields = [*JobOutSerializer.Meta.fields, "builds", "bisect_range"]

    # A claim is the request a fleet's agents make most, and a ModelSerializer builds its
    # forty-odd fields from the model for every instance (a third of a claim's reply). These
    # fields hold no nested serializer and no per-instance state until bound, so they are
    # built once and each reply binds shallow copies.
    _templates: ClassVar[dict[str, serializers.Field] | None] = None

    def get_fields(self) -> dict[str, serializers.Field]:
        cls = type(self)
        templates = cls.__dict__.get("_templates")
        if templates is None:
            templates = cls._templates = super().get_fields()
        return {name: copy.copy(field) for name, field in templates.items()}

    def to_representation(self, instance: Job) -> dict[str, Any]:
        data = super().to_representation(instance)
        if not data.get("bisect_range"):
            data.pop("bisect_range", None)
        return data


class JobDetailOutSerializer(JobOutSerializer):
    events = JobEventOutSerializer(many=True, read_only=True)
    builds = serializers.SerializerMethodField()

    class Meta(JobOutSerializer.Meta):
        fields = [*JobOutSerializer.Meta.fields, "builds", "events"]

    def get_builds(self, job: Job) -> dict[str, Any]:
        """The recipes the job builds, as queued; patches by name and digest (no text)."""
        return {
            name: {
                **spec,
                "patches": [{"name": p["name"], "sha256": p["sha256"]} for p in spec["patches"]],
            }
            for name, spec in job.builds.items()
        }


class ScheduleInSerializer(InSerializer):
    name = StrictCharField(max_length=200)
    crontab = StrictCharField(max_length=100)
    template = JobInSerializer()
    enabled = serializers.BooleanField(default=True)
    file_set = StrictCharField(
        max_length=100,
        default="",
        allow_blank=True,
        help_text="the set of files `benchhub apply` keeps this schedule with; empty (the "
        "default) for one made by hand",
    )

    def validate_crontab(self, value: str) -> str:
        return crontab_check(value)


class ScheduleOutSerializer(serializers.ModelSerializer):
    class Meta:
        model = JobSchedule
        fields = ["id", "name", "crontab", "template", "enabled", "file_set", "created_at"]


class ActiveJobOutSerializer(serializers.ModelSerializer):
    workload = serializers.CharField(source="workload.name", default="")
    claimed_host = serializers.CharField(source="claimed_host.name", allow_null=True, default=None)
    expected_end = serializers.SerializerMethodField(
        help_text="when the job should end at the pace of its steps so far; null until known"
    )

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_expected_end(self, job: Job) -> str | None:
        end = job_expected_end(job=job, now=timezone.now())
        return serializers.DateTimeField().to_representation(end) if end else None

    class Meta:
        model = Job
        fields = [
            "id",
            "state",
            "versions",
            "workload",
            "claimed_host",
            "attempt",
            "max_attempts",
            "claimed_at",
            "started_at",
            "last_heartbeat_at",
            "progress",
            "expected_end",
        ]


class HostPresenceOutSerializer(serializers.Serializer):
    name = serializers.CharField()
    last_seen_at = serializers.DateTimeField(allow_null=True)
    seen_s_ago = serializers.FloatField(allow_null=True, help_text="seconds, by the server's clock")
    online = serializers.BooleanField(help_text="seen within BENCHHUB_AGENT_ONLINE_S")
    agent = serializers.BooleanField(
        help_text="measured by an agent (has a runner token); false for a host only imports name"
    )


class StatusOutSerializer(serializers.Serializer):
    queue = serializers.DictField(child=serializers.IntegerField(), help_text="jobs per state")
    active = ActiveJobOutSerializer(many=True, help_text="claimed and running jobs")
    hosts = HostPresenceOutSerializer(many=True)
