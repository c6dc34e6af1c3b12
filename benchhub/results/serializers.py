"""Validation of a run upload, and the shapes runs and results are read in.

The upload contract is docs/runner-api.md. Serializers only validate and shape; the write is
results.services.run_submit. Progress samples and statement latencies are validated by hand-written
fields: an upload carries thousands of them, and a nested serializer per sample would dominate the
cost of an upload.
"""

import json
import re
from dataclasses import replace
from typing import Any

from benchhub_runner.jobspec.plan import PLAN_SPECS, RUN_PLAN_FIELDS
from benchhub_runner.results.payload import PROGRESS_FIELDS
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from benchhub.api.fields import (
    BIGINT_MAX,
    RecordListField,
    Records,
    StrictCharField,
    StrictFloatField,
    StrictIntegerField,
    StringMapField,
    TagsParamField,
)
from benchhub.api.plan_fields import plan_field
from benchhub.api.serializers import InSerializer
from benchhub.builds.models import Build
from benchhub.builds.versions import VersionError, version_parse
from benchhub.hosts.api import HostFactsOutSerializer
from benchhub.results.evidence_serializers import EvidenceField
from benchhub.results.excerpts import (
    IMPORT_SHOWN_CHARS,
    Excerpt,
    import_text_url,
    run_import_head,
)
from benchhub.results.models import DetailPruning, ProgressSeries, Result, ResultEvidence, Run
from benchhub.results.partitions import run_pruning
from benchhub.results.rows import PlainRowsListSerializer
from benchhub.workloads.serializers import WorkloadInSerializer, check_name

# What pgbench printed for one result (or stream), in characters.
RAW_OUTPUT_MAX = 5_000_000

MAX_RESULTS = 10000
MAX_PROGRESS = 100000
# Progress and telemetry samples of a whole run (about 55 hours of one-second samples): a run
# page or API read of one run stays bounded whatever its results hold.
MAX_RUN_SAMPLES = 200_000
MAX_STATEMENTS = 1000


# A progress sample's fields are the agent's (benchhub_runner.results.payload): non-negative
# numbers, the counts integers, and `t` (seconds into the run) required.
PROGRESS_COUNTS = ("failed", "skipped")
PROGRESS_SPEC = {
    name: ("int" if name in PROGRESS_COUNTS else "float", name == "t", 0)
    for name in PROGRESS_FIELDS
}
STATEMENT_SPEC = {
    "latency_ms": ("float", False, 0),
    "failures": ("int", False, 0),
    "retries": ("int", False, 0),
    "command": ("str", True, None),
    "script": ("int|str", False, 0),
}


# The agent's per-second OS samples (runners/benchhub_runner/measure/telemetry.py).
TELEMETRY_SPEC = {
    "t": ("float", True, 0),
    **{
        name: ("float", False, 0)
        for name in (
            "cpu_user_pct",
            "cpu_system_pct",
            "cpu_iowait_pct",
            "cpu_idle_pct",
            "cpu_steal_pct",
            "ctx_switches_per_s",
            "interrupts_per_s",
            "procs_running",
            "mem_used_bytes",
            "mem_cached_bytes",
            "disk_read_bytes_per_s",
            "disk_write_bytes_per_s",
            "disk_read_iops",
            "disk_write_iops",
            "disk_util_pct",
            "client_cpu_pct",
        )
    },
    "disk_device": ("str", False, None),
}


class FactsSerializer(InSerializer):
    cpu_model = StrictCharField(max_length=300, required=False, allow_blank=True)
    sockets = StrictIntegerField(min_value=1, required=False, allow_null=True)
    cores = StrictIntegerField(min_value=1, required=False, allow_null=True)
    threads = StrictIntegerField(min_value=1, required=False, allow_null=True)
    numa_nodes = StrictIntegerField(min_value=1, required=False, allow_null=True)
    memory_bytes = StrictIntegerField(
        min_value=1, max_value=BIGINT_MAX, required=False, allow_null=True
    )
    storage = StrictCharField(max_length=5000, required=False, allow_blank=True)
    filesystem = StrictCharField(max_length=100, required=False, allow_blank=True)
    kernel = StrictCharField(max_length=300, required=False, allow_blank=True)
    os = StrictCharField(max_length=300, required=False, allow_blank=True)
    virtualization = StrictCharField(max_length=100, required=False, allow_blank=True)


class HostInSerializer(InSerializer):
    name = StrictCharField(validators=[check_name])
    facts = FactsSerializer(required=False, default=dict)
    lscpu = StrictCharField(max_length=200000, required=False, allow_blank=True, default="")
    sysctl = StringMapField(required=False, default=dict)
    extra = serializers.DictField(required=False, default=dict)


MAX_PROVENANCE_CHARS = 100_000


class BuildInSerializer(InSerializer):
    version = StrictCharField(max_length=100)
    commit = StrictCharField(max_length=40, required=False, allow_blank=True, default="")
    configure_flags = StrictCharField(max_length=5000, required=False, allow_blank=True, default="")
    origin = serializers.ChoiceField(choices=Build.Origin.choices, default=Build.Origin.UNKNOWN)
    provenance = serializers.DictField(
        required=False,
        default=dict,
        help_text="built from source: what the agent recorded (docs/runner-api.md)",
    )

    def validate_provenance(self, value: dict[str, Any]) -> dict[str, Any]:
        if len(json.dumps(value)) > MAX_PROVENANCE_CHARS:
            raise serializers.ValidationError(
                f"Provenance is limited to {MAX_PROVENANCE_CHARS} characters of JSON."
            )
        key = value.get("key")
        if value and not (isinstance(key, str) and re.fullmatch(r"[0-9a-f]{16,64}", key)):
            raise serializers.ValidationError("Provenance needs the build's key (hex digits).")
        return value

    def validate_version(self, value: str) -> str:
        try:
            version_parse(value)
        except VersionError as exc:
            raise serializers.ValidationError(str(exc)) from None
        return value

    def validate_commit(self, value: str) -> str:
        if value and not re.fullmatch(r"[0-9a-fA-F]{4,40}", value):
            raise serializers.ValidationError("A commit is 4 to 40 hexadecimal digits.")
        return value.lower()


class ConfigurationInSerializer(InSerializer):
    settings = StringMapField()
    sources = StringMapField(required=False, default=dict)
    overrides = StringMapField(required=False, default=dict)
    # The agent's report of overrides this server's major took under another name or not at all.
    translated = StringMapField(required=False, default=dict, max_items=500)
    not_applied = StringMapField(required=False, default=dict, max_items=500)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        for name in ("translated", "not_applied"):
            stray = sorted(set(attrs[name]) - set(attrs["overrides"]))
            if stray:
                raise serializers.ValidationError(
                    {name: f"Not among the overrides: {', '.join(stray[:5])}."}
                )
        return attrs


class InitInSerializer(InSerializer):
    output = StrictCharField(max_length=1_000_000, required=False, allow_blank=True, default="")
    timings = serializers.DictField(
        child=StrictFloatField(min_value=0), required=False, default=dict
    )


class TablespaceInSerializer(InSerializer):
    """One tablespace of the run and its device's I/O (benchhub_runner.servers.tablespaces)."""

    name = StrictCharField(max_length=63)
    location = StrictCharField(max_length=4096)
    dev = StrictCharField(max_length=32, allow_blank=True)
    mount_point = StrictCharField(max_length=4096, allow_blank=True)
    fstype = StrictCharField(max_length=64, allow_blank=True)
    # Declared fields leave the class namespace (SerializerMetaclass): no clash with Field.source.
    source = StrictCharField(max_length=4096, allow_blank=True)  # type: ignore[assignment]
    device = StrictCharField(max_length=200, allow_blank=True)
    measured_s = StrictFloatField(min_value=0)
    read_bytes_per_s = StrictFloatField(min_value=0, allow_null=True)
    write_bytes_per_s = StrictFloatField(min_value=0, allow_null=True)
    read_iops = StrictFloatField(min_value=0, allow_null=True)
    write_iops = StrictFloatField(min_value=0, allow_null=True)
    util_pct = StrictFloatField(min_value=0, max_value=100, allow_null=True)


def errors_field() -> serializers.ListField:
    """pgbench's error lines of a result or a stream, as the agent or the parser saw them."""
    return serializers.ListField(
        child=StrictCharField(max_length=10000, allow_blank=True),
        required=False,
        default=list,
        max_length=1000,
    )


class StreamResultInSerializer(InSerializer):
    name = StrictCharField(max_length=50)
    role = serializers.ChoiceField(choices=["measured", "background"])
    processes = StrictIntegerField(min_value=1, default=1)
    clients = StrictIntegerField(min_value=1)
    threads = StrictIntegerField(min_value=1, required=False, allow_null=True)
    tps = StrictFloatField(min_value=0, required=False, allow_null=True)
    transactions = StrictIntegerField(
        min_value=0, max_value=BIGINT_MAX, required=False, allow_null=True
    )
    failed_transactions = StrictIntegerField(
        min_value=0, max_value=BIGINT_MAX, required=False, allow_null=True
    )
    latency_avg_ms = StrictFloatField(min_value=0, required=False, allow_null=True)
    latency_stddev_ms = StrictFloatField(min_value=0, required=False, allow_null=True)
    rows_per_transaction = StrictIntegerField(min_value=1, required=False, allow_null=True)
    rows_per_s = StrictFloatField(min_value=0, required=False, allow_null=True)
    established = StrictIntegerField(min_value=0, required=False, allow_null=True)
    aborted = serializers.BooleanField(default=False)
    errors = errors_field()  # type: ignore[assignment]  # a field, not Serializer.errors
    raw_output = StrictCharField(
        max_length=RAW_OUTPUT_MAX, required=False, allow_blank=True, default=""
    )


class ResultInSerializer(InSerializer):
    clients = StrictIntegerField(min_value=1)
    repeat = StrictIntegerField(min_value=1, default=1)
    threads = StrictIntegerField(min_value=1, required=False, allow_null=True)
    duration_s = StrictFloatField(
        min_value=0.001, required=False, allow_null=True, help_text="this level's pgbench -T"
    )
    tps = StrictFloatField(min_value=0, required=False, allow_null=True)
    tps_including_connections = StrictFloatField(min_value=0, required=False, allow_null=True)
    transactions = StrictIntegerField(
        min_value=0, max_value=BIGINT_MAX, required=False, allow_null=True
    )
    failed_transactions = StrictIntegerField(
        min_value=0, max_value=BIGINT_MAX, required=False, allow_null=True
    )
    skipped_transactions = StrictIntegerField(
        min_value=0, max_value=BIGINT_MAX, required=False, allow_null=True
    )
    retried_transactions = StrictIntegerField(
        min_value=0, max_value=BIGINT_MAX, required=False, allow_null=True
    )
    latency_avg_ms = StrictFloatField(min_value=0, required=False, allow_null=True)
    latency_stddev_ms = StrictFloatField(min_value=0, required=False, allow_null=True)
    initial_connection_time_ms = StrictFloatField(min_value=0, required=False, allow_null=True)
    aborted = serializers.BooleanField(default=False)
    errors = errors_field()  # type: ignore[assignment]  # a field, not Serializer.errors
    statements = RecordListField(
        spec=STATEMENT_SPEC, max_items=MAX_STATEMENTS, required=False, default=list
    )
    progress = RecordListField(
        spec=PROGRESS_SPEC, max_items=MAX_PROGRESS, required=False, default=list
    )
    telemetry = RecordListField(
        spec=TELEMETRY_SPEC, max_items=MAX_PROGRESS, required=False, default=list
    )
    client_bound = serializers.BooleanField(required=False, allow_null=True, default=None)
    evidence = EvidenceField(
        required=False,
        allow_null=True,
        default=None,
        help_text="what explains the result: statistics, waits, latency, statements, profile",
    )
    raw_output = StrictCharField(
        max_length=RAW_OUTPUT_MAX, required=False, allow_blank=True, default=""
    )
    # many=True hands max_length to the ListSerializer; the stubs do not know it.
    streams = StreamResultInSerializer(  # type: ignore[call-arg]
        many=True, required=False, default=list, max_length=8
    )

    class Meta:
        # An upload's results are read as typed rows in one pass (results.rows), and by these
        # fields item by item only when one does not pass as it is.
        list_serializer_class = PlainRowsListSerializer

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        names = [stream["name"] for stream in attrs["streams"]]
        if len(set(names)) != len(names):
            raise serializers.ValidationError({"streams": "Stream names must be unique."})
        if not attrs["aborted"] and attrs.get("tps") is None:
            raise serializers.ValidationError(
                {"tps": "A result that did not abort needs a tps; else send aborted: true."}
            )
        progress = attrs["progress"]
        times = (
            progress.columns["t"]
            if isinstance(progress, Records)
            else [sample["t"] for sample in progress]
        )
        if len(times) != len(set(times)):
            raise serializers.ValidationError({"progress": "Progress times must be unique."})
        return attrs


class StoppedInSerializer(InSerializer):
    """Where and why a partial run's sweep stopped."""

    stage = StrictCharField(max_length=100)
    reason = StrictCharField(max_length=10000)
    clients = StrictIntegerField(min_value=1, help_text="the client level that failed")


class JobRefSerializer(InSerializer):
    id = StrictIntegerField(min_value=1)
    attempt = StrictIntegerField(min_value=1)


# A run records what was measured, which a job's plan bounds need not hold: an import, a summary
# or a run of an older agent may have measured less than a second, more levels than a job may
# ask, longer warm-ups or more repeats. These widen the plan's bounds for an upload; every other
# property of a field (its kind, default, nullability) is the plan's.
UPLOAD_BOUNDS: dict[str, dict[str, Any]] = {
    "clients": {"maximum": None},
    "duration_s": {"minimum": 0.001, "maximum": None},
    "level_durations": {"minimum": 0.001},
    "repeats": {"maximum": None},
    "warmup_s": {"maximum": 86400},
}
UPLOAD_MAX_LEVELS = 1000


def upload_plan_field(name: str) -> serializers.Field:
    """The upload's field of plan field `name` (one of RUN_PLAN_FIELDS)."""
    spec = replace(PLAN_SPECS[name], **UPLOAD_BOUNDS.get(name, {}))
    return plan_field(name, spec, max_levels=UPLOAD_MAX_LEVELS)


class RunUploadSerializer(InSerializer):
    run_uuid = serializers.UUIDField()
    job = JobRefSerializer(required=False, help_text="the job and attempt this run belongs to")
    host = HostInSerializer()
    build = BuildInSerializer()
    configuration = ConfigurationInSerializer()
    workload = WorkloadInSerializer()
    level_sequence = serializers.ListField(
        child=serializers.ListField(
            child=StrictIntegerField(min_value=1), min_length=2, max_length=2
        ),
        required=False,
        default=list,
        max_length=MAX_RESULTS,
        help_text="[clients, repeat] in the order measured",
    )
    stopped = StoppedInSerializer(required=False, default=None, allow_null=True)
    started_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(required=False, allow_null=True)
    status = serializers.ChoiceField(choices=Run.Status.choices)
    # Declared fields leave the class namespace (SerializerMetaclass): no clash with Field.source.
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=Run.Source.choices, default=Run.Source.AGENT
    )
    pgbench_version = StrictCharField(max_length=100, required=False, allow_blank=True, default="")
    server_version = StrictCharField(max_length=200, required=False, allow_blank=True, default="")
    init = InitInSerializer(required=False, default=dict)
    client_limits = serializers.DictField(
        child=StrictIntegerField(min_value=0), required=False, default=dict
    )
    tablespaces = TablespaceInSerializer(  # type: ignore[call-arg]
        many=True, required=False, default=list, max_length=8
    )
    notes = StrictCharField(max_length=10000, required=False, allow_blank=True, default="")
    # many=True hands max_length to the ListSerializer; the stubs do not know it.
    results = ResultInSerializer(  # type: ignore[call-arg]
        many=True, allow_empty=False, max_length=MAX_RESULTS
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        plan = {name: upload_plan_field(name) for name in RUN_PLAN_FIELDS}
        # The plan fields where the contract lists them: after the workload.
        at = list(fields).index("workload") + 1
        items = list(fields.items())
        return dict([*items[:at], *plan.items(), *items[at:]])

    def to_internal_value(self, data: Any) -> Any:
        # Counted before any result is validated: a body of a million samples costs a count.
        results = data.get("results") if isinstance(data, dict) else None
        if isinstance(results, list):
            samples = sum(
                len(r.get(key) or []) if isinstance(r.get(key), list) else 0
                for r in results
                if isinstance(r, dict)
                for key in ("progress", "telemetry")
            )
            if samples > MAX_RUN_SAMPLES:
                raise serializers.ValidationError(
                    {
                        "results": [
                            f"At most {MAX_RUN_SAMPLES} progress and telemetry samples a run "
                            f"(MAX_RUN_SAMPLES); this run has {samples}."
                        ]
                    }
                )
        return super().to_internal_value(data)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        errors: dict[str, Any] = {}
        if attrs.get("duration_s") is not None and attrs.get("transactions_per_client") is not None:
            errors["transactions_per_client"] = (
                "Give duration_s or transactions_per_client, not both."
            )
        if attrs.get("finished_at") and attrs["finished_at"] < attrs["started_at"]:
            errors["finished_at"] = "finished_at is before started_at."
        if len(set(attrs["clients"])) != len(attrs["clients"]):
            errors["clients"] = "Client levels must be unique."
        if (attrs["status"] == Run.Status.PARTIAL) != (attrs.get("stopped") is not None):
            errors["stopped"] = "A partial run, and only a partial run, says where it stopped."
        levels = {str(c) for c in attrs["clients"]}
        if not levels.issuperset(attrs["level_durations"]):
            errors["level_durations"] = "Its keys are client levels of the run."
        errors.update(self._check_results(attrs))
        if errors:
            raise serializers.ValidationError(errors)
        return attrs

    def _check_results(self, attrs: dict[str, Any]) -> dict[str, Any]:
        levels = set(attrs["clients"])
        seen: set[tuple[int, int]] = set()
        errors: dict[str, Any] = {}
        for index, result in enumerate(attrs["results"]):
            key = (result["clients"], result["repeat"])
            if result["clients"] not in levels:
                errors[f"results[{index}].clients"] = "This level is not in the run's clients."
            elif result["repeat"] > attrs["repeats"]:
                errors[f"results[{index}].repeat"] = "repeat is greater than the run's repeats."
            elif key in seen:
                errors[f"results[{index}]"] = "Another result has the same clients and repeat."
            seen.add(key)
        return errors


class ResultOutSerializer(serializers.ModelSerializer):
    class Meta:
        model = Result
        fields = [
            "clients",
            "repeat",
            "threads",
            "duration_s",
            "tps",
            "tps_including_connections",
            "transactions",
            "failed_transactions",
            "skipped_transactions",
            "retried_transactions",
            "latency_avg_ms",
            "latency_stddev_ms",
            "initial_connection_time_ms",
            "aborted",
            "errors",
            "statements",
            "client_bound",
            "unsteady",
            "unsteady_change",
        ]


class EvidenceOutSerializer(serializers.ModelSerializer):
    class Meta:
        model = ResultEvidence
        fields = ["stats", "waits", "latency", "statements", "profile", "unavailable"]


def result_evidence_out(result: Result) -> dict[str, Any] | None:
    """A result's evidence as the upload gave it, or None (read with select_related)."""
    try:
        return dict(EvidenceOutSerializer(result.evidence).data)
    except ResultEvidence.DoesNotExist:
        return None


class ProgressOutSerializer(serializers.Serializer):
    t = serializers.FloatField()
    tps = serializers.FloatField(allow_null=True)
    latency_ms = serializers.FloatField(allow_null=True)
    stddev_ms = serializers.FloatField(allow_null=True)
    failed = serializers.IntegerField(allow_null=True)
    skipped = serializers.IntegerField(allow_null=True)
    lag_ms = serializers.FloatField(allow_null=True)


class ResultWithProgressOutSerializer(ResultOutSerializer):
    progress = serializers.SerializerMethodField()
    telemetry = serializers.JSONField(
        read_only=True,
        help_text="the agent's OS samples, one a second, as the upload gave them; empty once "
        "retention dropped them",
    )
    raw_output = serializers.CharField(
        read_only=True,
        help_text="the head of what pgbench printed (at most 16,000 characters, a page's "
        "outputs together at most 64,000); empty once retention dropped it",
    )
    raw_output_chars = serializers.IntegerField(
        read_only=True, help_text="the whole output's length in characters"
    )
    raw_output_url = serializers.CharField(
        read_only=True,
        allow_null=True,
        help_text="where the whole output is read (text/plain, in pages with offset and limit); "
        "null without an output",
    )

    class Meta(ResultOutSerializer.Meta):
        fields = [
            *ResultOutSerializer.Meta.fields,
            *("progress", "telemetry", "raw_output", "raw_output_chars", "raw_output_url"),
        ]

    @extend_schema_field(ProgressOutSerializer(many=True))
    def get_progress(self, result: Result) -> list[dict[str, Any]]:
        """The samples as the upload gave them, from the result's row of arrays (read with
        select_related); none once retention dropped them."""
        try:
            series = result.progress_series
        except ProgressSeries.DoesNotExist:
            return []
        return series.samples()


class RunOutSerializer(serializers.ModelSerializer):
    run_uuid = serializers.UUIDField(source="uuid")
    host = serializers.CharField(source="host.name")
    version = serializers.CharField(source="build.version")
    build = serializers.SerializerMethodField()
    workload = serializers.CharField(source="workload.name")
    config_hash = serializers.CharField(source="config.hash")
    host_fingerprint = serializers.CharField(source="host_facts.fingerprint")
    url = serializers.SerializerMethodField()

    class Meta:
        model = Run
        fields = [
            "run_uuid",
            "url",
            "host",
            "host_fingerprint",
            "version",
            "build",
            "workload",
            "config_hash",
            *RUN_PLAN_FIELDS,
            "level_sequence",
            "started_at",
            "finished_at",
            "created_at",
            "status",
            "stop_stage",
            "stop_reason",
            "stop_clients",
            "source",
            "pgbench_version",
            "server_version",
            "comparability_key",
            "aggregated_at",
            "unsteady_explained",
        ]

    def get_build(self, run: Run) -> dict[str, Any]:
        b = run.build
        return {
            "version": b.version,
            "major": b.major,
            "minor": b.minor,
            "stage": b.stage,
            "commit": b.commit,
            "configure_flags": b.configure_flags,
            "origin": b.origin,
            "input_key": b.input_key,
            "recipe": b.version if b.recipe_id else None,
            "provenance": b.provenance,
        }

    def get_url(self, run: Run) -> str:
        return f"/api/v1/runs/{run.uuid}/"


class AggregateOutSerializer(serializers.Serializer):
    clients = serializers.IntegerField()
    samples = serializers.IntegerField()
    aborted = serializers.IntegerField()
    tps_median = serializers.FloatField(allow_null=True)
    tps_mean = serializers.FloatField(allow_null=True)
    tps_stddev = serializers.FloatField(allow_null=True)
    tps_min = serializers.FloatField(allow_null=True)
    tps_max = serializers.FloatField(allow_null=True)
    latency_median_ms = serializers.FloatField(allow_null=True)
    latency_mean_ms = serializers.FloatField(allow_null=True)


class PrunedOutSerializer(serializers.ModelSerializer):
    class Meta:
        model = DetailPruning
        fields = ["parts", "pruned_at"]


class RunDetailOutSerializer(RunOutSerializer):
    host_facts = HostFactsOutSerializer(read_only=True)
    settings = serializers.JSONField()
    config_overrides = serializers.JSONField()
    settings_translated = serializers.JSONField()
    settings_not_applied = serializers.JSONField()
    init_timings = serializers.JSONField()
    workload_definition = serializers.SerializerMethodField()
    aggregates = AggregateOutSerializer(many=True, read_only=True)
    pruned = serializers.SerializerMethodField()
    import_text = serializers.SerializerMethodField(
        help_text="imported runs: the head of the text as pasted or uploaded (at most "
        f"{IMPORT_SHOWN_CHARS:,} characters; `import_text_url` has the whole); empty for an "
        "agent's run, or once retention dropped it (`pruned` says so)"
    )
    import_text_chars = serializers.SerializerMethodField(
        help_text="the whole imported text's length in characters (0: none)"
    )
    import_text_url = serializers.SerializerMethodField(
        help_text="the whole imported text, text/plain; null when there is none"
    )

    class Meta(RunOutSerializer.Meta):
        fields = [
            *RunOutSerializer.Meta.fields,
            "pruned",
            "host_facts",
            "settings",
            "config_overrides",
            "settings_translated",
            "settings_not_applied",
            "init_timings",
            "workload_definition",
            "aggregates",
            "import_text",
            "import_text_chars",
            "import_text_url",
        ]

    def _import_excerpt(self, run: Run) -> Excerpt:
        # The text is read once per answer, however many fields show part of it.
        cached = getattr(run, "_import_excerpt", None)
        if cached is None:
            cached = run_import_head(run=run)
            run._import_excerpt = cached  # type: ignore[attr-defined]
        return cached

    def get_import_text(self, run: Run) -> str:
        return self._import_excerpt(run).head

    def get_import_text_chars(self, run: Run) -> int:
        return self._import_excerpt(run).total_chars

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_import_text_url(self, run: Run) -> str | None:
        if not self._import_excerpt(run).total_chars:
            return None
        return import_text_url(run_uuid=run.uuid)

    @extend_schema_field(PrunedOutSerializer(allow_null=True))
    def get_pruned(self, run: Run) -> dict[str, Any] | None:
        """What retention dropped of the run's detail and when; null while it is all there."""
        pruning = run_pruning(created_at=run.created_at)
        return None if pruning is None else dict(PrunedOutSerializer(pruning).data)

    def get_workload_definition(self, run: Run) -> dict[str, Any]:
        w = run.workload
        return {
            "name": w.name,
            "builtin": w.builtin,
            "scripts": w.scripts,
            "setup": w.setup,
            "query_mode": w.query_mode,
            "options": w.options,
        }


class RunFilterSerializer(serializers.Serializer):
    """Query parameters of the run list; a bad one is a 400 naming it."""

    host = serializers.CharField(required=False)
    version = serializers.CharField(required=False)
    workload = serializers.CharField(required=False)
    started_after = serializers.DateTimeField(required=False)
    started_before = serializers.DateTimeField(required=False)
    status = serializers.ChoiceField(choices=Run.Status.choices, required=False)
    tag = TagsParamField()
