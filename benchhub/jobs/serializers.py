"""Validation of job requests, heartbeats and finishes; shapes of jobs as the API returns them."""

import re
from typing import Any

from rest_framework import serializers

from benchhub.api.fields import (
    StrictCharField,
    StrictFloatField,
    StrictIntegerField,
    StringMapField,
)
from benchhub.builds.versions import VersionError, version_parse
from benchhub.hosts.models import Host
from benchhub.jobs.models import Job, JobEvent, JobSchedule
from benchhub.workloads.catalog import catalog_job_request
from benchhub.workloads.serializers import JobWorkloadInSerializer

GUC_NAME = re.compile(r"^[a-z_][a-z0-9_.]{0,62}$")
MAX_LEVELS = 64


def _check_version(value: str) -> str:
    try:
        version_parse(value)
    except VersionError as exc:
        raise serializers.ValidationError(str(exc)) from None
    return value.strip()


class JobInSerializer(serializers.Serializer):
    versions = serializers.ListField(
        child=StrictCharField(max_length=100, validators=[_check_version]),
        min_length=1,
        max_length=16,
    )
    workload = JobWorkloadInSerializer()
    scale = StrictIntegerField(min_value=1, required=False, allow_null=True)
    clients = serializers.ListField(
        child=StrictIntegerField(min_value=1, max_value=100000), min_length=1, max_length=MAX_LEVELS
    )
    threads_policy = serializers.ChoiceField(
        choices=Job.Threads.choices, default=Job.Threads.CLIENTS
    )
    threads = StrictIntegerField(min_value=1, required=False, allow_null=True)
    level_threads = serializers.DictField(
        child=StrictIntegerField(min_value=1, max_value=10000), required=False, default=dict
    )
    duration_s = StrictFloatField(min_value=1, max_value=86400, required=False, allow_null=True)
    transactions_per_client = StrictIntegerField(min_value=1, required=False, allow_null=True)
    repeats = StrictIntegerField(min_value=1, max_value=100, default=1)
    config_overrides = StringMapField(required=False, default=dict, max_items=500)
    order = serializers.ChoiceField(choices=Job.Order.choices, default=Job.Order.INTERLEAVED)
    host = serializers.SlugRelatedField(
        slug_field="name", queryset=Host.objects.all(), required=False, allow_null=True
    )
    host_tags = serializers.ListField(
        child=StrictCharField(max_length=64), required=False, default=list, max_length=20
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

    def validate_config_overrides(self, value: dict[str, str]) -> dict[str, str]:
        bad = [name for name in value if not GUC_NAME.match(name)]
        if bad:
            raise serializers.ValidationError(f"Not setting names: {', '.join(bad[:5])}.")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        errors = {}
        if (attrs.get("duration_s") is None) == (attrs.get("transactions_per_client") is None):
            errors["duration_s"] = "Give exactly one of duration_s and transactions_per_client."
        if attrs["threads_policy"] == Job.Threads.FIXED and not attrs.get("threads"):
            errors["threads"] = "A fixed threads policy needs threads."
        if attrs["threads_policy"] == Job.Threads.PAIRS:
            missing = [c for c in attrs["clients"] if str(c) not in attrs["level_threads"]]
            if missing:
                errors["level_threads"] = (
                    f"The pairs policy needs threads for every level; missing: {missing[:10]}."
                )
        if len(set(attrs["clients"])) != len(attrs["clients"]):
            errors["clients"] = "Client levels must be unique."
        if attrs.get("aa"):
            if len(set(attrs["versions"])) != 1:
                errors["versions"] = "An A/A job names exactly one version."
            else:
                attrs["versions"] = [attrs["versions"][0]] * 2
        elif len(set(attrs["versions"])) != len(attrs["versions"]):
            errors["versions"] = "Versions must be unique."
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


class HeartbeatInSerializer(serializers.Serializer):
    progress = serializers.DictField(required=False, default=dict)

    def validate_progress(self, value: dict[str, Any]) -> dict[str, Any]:
        if len(str(value)) > 20000:
            raise serializers.ValidationError("Progress is limited to 20000 characters.")
        return value


class FinishInSerializer(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=[Job.State.DONE, Job.State.FAILED])
    stage = StrictCharField(max_length=50, required=False, allow_blank=True, default="")
    message = StrictCharField(max_length=20000, required=False, allow_blank=True, default="")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["outcome"] == Job.State.FAILED and not attrs["stage"]:
            raise serializers.ValidationError({"stage": "A failure names its stage."})
        return attrs


class ReleaseInSerializer(serializers.Serializer):
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
            "scale",
            "clients",
            "threads_policy",
            "threads",
            "level_threads",
            "duration_s",
            "transactions_per_client",
            "repeats",
            "config_overrides",
            "order",
            "aa",
            "host",
            "host_tags",
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
        return [str(run.uuid) for run in job.runs.all()]


class JobDetailOutSerializer(JobOutSerializer):
    events = JobEventOutSerializer(many=True, read_only=True)

    class Meta(JobOutSerializer.Meta):
        fields = [*JobOutSerializer.Meta.fields, "events"]


class ScheduleInSerializer(serializers.Serializer):
    name = StrictCharField(max_length=200)
    crontab = StrictCharField(max_length=100)
    template = JobInSerializer()
    enabled = serializers.BooleanField(default=True)

    def validate_crontab(self, value: str) -> str:
        fields = value.split()
        if len(fields) != 5 or not all(re.fullmatch(r"[0-9*/,\-]+", f) for f in fields):
            raise serializers.ValidationError(
                "Five crontab fields (minute hour day month weekday), e.g. '0 2 * * *'."
            )
        return " ".join(fields)


class ScheduleOutSerializer(serializers.ModelSerializer):
    class Meta:
        model = JobSchedule
        fields = ["id", "name", "crontab", "template", "enabled", "created_at"]


class ActiveJobOutSerializer(serializers.ModelSerializer):
    workload = serializers.CharField(source="workload.name", default="")
    claimed_host = serializers.CharField(source="claimed_host.name", allow_null=True, default=None)

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
        ]


class HostPresenceOutSerializer(serializers.Serializer):
    name = serializers.CharField()
    last_seen_at = serializers.DateTimeField(allow_null=True)
    seen_s_ago = serializers.FloatField(allow_null=True, help_text="seconds, by the server's clock")
    online = serializers.BooleanField(help_text="seen within BENCHHUB_AGENT_ONLINE_S")


class StatusOutSerializer(serializers.Serializer):
    queue = serializers.DictField(child=serializers.IntegerField(), help_text="jobs per state")
    active = ActiveJobOutSerializer(many=True, help_text="claimed and running jobs")
    hosts = HostPresenceOutSerializer(many=True)
