"""Validation of workload definitions, shared by run uploads and jobs."""

import re
from typing import Any

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from benchhub.api.fields import StrictCharField, StrictIntegerField
from benchhub.api.serializers import InSerializer
from benchhub.workloads.models import Workload

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$")


def check_name(value: str) -> str:
    """A name fit for URLs and file names: letters, digits and . _ : @ -."""
    if not NAME_RE.match(value):
        raise serializers.ValidationError(
            "Use 1 to 200 letters, digits and . _ : @ -, starting with a letter or digit."
        )
    return value


class ScriptInSerializer(InSerializer):
    """One script of a workload: a custom `body`, or a `builtin` by name (a weighted builtin,
    `-b select-only@9`). A builtin's name defaults to the builtin's own."""

    name = StrictCharField(max_length=200, required=False)
    weight = StrictIntegerField(min_value=0, default=1)
    builtin = serializers.ChoiceField(choices=Workload.Builtin.choices, required=False)
    body = StrictCharField(max_length=100000, required=False, allow_blank=True)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("builtin") and not attrs.get("body"):
            raise serializers.ValidationError("A script needs a builtin name or a body.")
        if attrs.get("builtin") and attrs.get("body"):
            raise serializers.ValidationError(
                {"body": "A script is a builtin or a body, not both."}
            )
        if not attrs.get("name"):
            if not attrs.get("builtin"):
                raise serializers.ValidationError({"name": "A custom script needs a name."})
            attrs["name"] = attrs["builtin"]
        return attrs


def check_weights(builtin: str, scripts: list[dict[str, Any]]) -> None:
    """pgbench refuses a set of scripts whose weights are all 0 (a lone builtin weighs 1)."""
    if scripts and not builtin and not any(script["weight"] for script in scripts):
        raise serializers.ValidationError(
            {"scripts": "At least one script needs a weight above 0."}
        )


MAX_STREAMS = 8


class StreamInSerializer(InSerializer):
    """One pgbench process (or, with per_client, one per client) of a multi-stream workload."""

    name = StrictCharField(validators=[check_name], max_length=50)
    role = serializers.ChoiceField(choices=["measured", "background"], default="measured")
    builtin = serializers.ChoiceField(
        choices=Workload.Builtin.choices, required=False, allow_blank=True, default=""
    )
    scripts = ScriptInSerializer(many=True, required=False, default=list)
    clients = StrictIntegerField(min_value=1, max_value=100000, required=False, allow_null=True)
    threads = StrictIntegerField(min_value=1, max_value=10000, required=False, allow_null=True)
    per_client = serializers.BooleanField(default=False)
    rows_per_transaction = StrictIntegerField(
        min_value=1, max_value=10**9, required=False, allow_null=True
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("builtin") and not attrs.get("scripts"):
            raise serializers.ValidationError({"builtin": "Give the stream a builtin or scripts."})
        check_weights(attrs.get("builtin", ""), attrs.get("scripts") or [])
        if attrs["per_client"] and attrs.get("clients") is not None:
            raise serializers.ValidationError(
                {"clients": "A per_client stream runs one process per client of the level."}
            )
        attrs.setdefault("clients", None)
        attrs.setdefault("threads", None)
        attrs.setdefault("rows_per_transaction", None)
        return attrs


class WorkloadInSerializer(InSerializer):
    name = StrictCharField(validators=[check_name])
    builtin = serializers.ChoiceField(
        choices=Workload.Builtin.choices, required=False, allow_blank=True, default=""
    )
    scripts = ScriptInSerializer(many=True, required=False, default=list)
    setup = serializers.ListField(
        child=StrictCharField(max_length=100000), required=False, default=list, max_length=1000
    )
    query_mode = serializers.ChoiceField(
        choices=Workload.QueryMode.choices, default=Workload.QueryMode.SIMPLE
    )
    options = serializers.ListField(
        child=StrictCharField(max_length=1000), required=False, default=list, max_length=100
    )
    level_setup = serializers.ListField(
        child=StrictCharField(max_length=100000), required=False, default=list, max_length=100
    )
    # many=True hands max_length to the ListSerializer; the stubs do not know it.
    streams = StreamInSerializer(  # type: ignore[call-arg]
        many=True, required=False, default=list, max_length=MAX_STREAMS
    )
    combine = serializers.ChoiceField(choices=Workload.Combine.choices, default="sum")
    progress_s = StrictIntegerField(min_value=1, max_value=60, default=1)
    catalog_entry = StrictCharField(max_length=100, required=False, allow_blank=True, default="")
    params = serializers.DictField(required=False, default=dict)
    presentation = serializers.ChoiceField(
        choices=Workload.Presentation.choices, default=Workload.Presentation.SWEEP
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        streams = attrs.get("streams") or []
        if streams:
            self._check_streams(attrs, streams)
        elif not attrs.get("builtin") and not attrs.get("scripts"):
            raise serializers.ValidationError({"builtin": "Give a builtin script or scripts."})
        else:
            check_weights(attrs.get("builtin", ""), attrs.get("scripts") or [])
        if len(str(attrs.get("params"))) > 10000:
            raise serializers.ValidationError({"params": "Params are limited to 10000 characters."})
        return attrs

    def _check_streams(self, attrs: dict[str, Any], streams: list[dict[str, Any]]) -> None:
        if attrs.get("builtin") or attrs.get("scripts"):
            raise serializers.ValidationError(
                {"streams": "With streams, give builtin and scripts in each stream, not above."}
            )
        names = [stream["name"] for stream in streams]
        if len(set(names)) != len(names):
            raise serializers.ValidationError({"streams": "Stream names must be unique."})
        measured = [s for s in streams if s["role"] == "measured"]
        if not measured:
            raise serializers.ValidationError({"streams": "At least one stream is measured."})
        if attrs["combine"] == Workload.Combine.MEASURED and len(measured) != 1:
            raise serializers.ValidationError(
                {"combine": "'measured' takes the figure of exactly one measured stream."}
            )


class CatalogWorkloadInSerializer(InSerializer):
    """A workload named by its catalog entry; the server expands it (workloads/catalog.py)."""

    catalog = StrictCharField(max_length=100, help_text="a catalog entry id, e.g. e1-pk-lookup")
    params = serializers.DictField(
        required=False, default=dict, help_text="over the entry's small defaults"
    )


@extend_schema_field(
    PolymorphicProxySerializer(
        component_name="JobWorkloadIn",
        serializers=[WorkloadInSerializer, CatalogWorkloadInSerializer],
        resource_type_field_name=None,
    )
)
class JobWorkloadInSerializer(WorkloadInSerializer):
    """A job's workload: a full definition, or `{"catalog": id, "params": {...}}` which
    JobInSerializer expands before validating (the schema shows both)."""


class CatalogParamOutSerializer(serializers.Serializer):
    name = serializers.CharField()
    type = serializers.ChoiceField(choices=["int", "str", "bool", "choice"])
    default = serializers.JSONField(help_text="the small size, the value when params omit it")
    published = serializers.JSONField(help_text="the size its authors used; null if none")
    help = serializers.CharField()
    minimum = serializers.IntegerField(allow_null=True)
    maximum = serializers.IntegerField(allow_null=True)
    choices = serializers.ListField(child=serializers.CharField())
    max_length = serializers.IntegerField()


class CatalogJobOutSerializer(serializers.Serializer):
    clients = serializers.ListField(child=serializers.IntegerField())
    threads_policy = serializers.CharField()
    threads = serializers.IntegerField(allow_null=True)
    level_threads = serializers.DictField(child=serializers.IntegerField())
    duration_s = serializers.FloatField()
    level_durations = serializers.DictField(child=serializers.FloatField())
    scale = serializers.IntegerField(allow_null=True)
    config_overrides = serializers.DictField(child=serializers.CharField())
    repeats = serializers.IntegerField()


class CatalogEntryOutSerializer(serializers.Serializer):
    id = serializers.CharField()
    experiment = serializers.CharField(help_text="builtin, or E1..E5 (docs/workloads.md)")
    title = serializers.CharField()
    description = serializers.CharField()
    presentation = serializers.CharField()
    params = CatalogParamOutSerializer(many=True)
    job_defaults = CatalogJobOutSerializer(help_text="for job fields a request omits")
    published_job = CatalogJobOutSerializer(allow_null=True, help_text="the published sizes")


class CatalogEntryDetailOutSerializer(CatalogEntryOutSerializer):
    workload = serializers.JSONField(help_text="the definition made from the default params")
