"""Validation of the import API's requests (docs/runner-api.md, "Importing history").

Serializers only validate and shape; the writes are results.imports.run_import_outputs and
runs_import_summary. A column of a table is named by its index (a JSON number, 0 is the first)
or by its header text (a string).
"""

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from benchhub.api.fields import StrictCharField, StrictFloatField, StrictIntegerField
from benchhub.api.serializers import InSerializer
from benchhub.workloads.models import Workload

MAX_OUTPUTS = 1000
OUTPUT_TEXT_MAX = 10_000_000


@extend_schema_field(
    {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "string", "minLength": 1}]}
)
class ColumnReferenceField(serializers.Field):
    """A column by index (a number) or by header (a string)."""

    default_error_messages = {"invalid": "Give a column index (a number) or a header (a string)."}

    def to_internal_value(self, data: Any) -> int | str:
        if isinstance(data, bool) or not isinstance(data, int | str):
            self.fail("invalid")
        if isinstance(data, int) and data < 0:
            self.fail("invalid")
        if isinstance(data, str) and not data.strip():
            self.fail("invalid")
        return data

    def to_representation(self, value: Any) -> Any:
        return value


class ImportOutputInSerializer(InSerializer):
    text = StrictCharField(max_length=OUTPUT_TEXT_MAX, help_text="one pgbench output, as pasted")
    name = StrictCharField(required=False, allow_blank=True, max_length=200)
    clients = StrictIntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="the number of clients, for an output that does not say it",
    )


class ImportOutputsInSerializer(InSerializer):
    host = StrictCharField(max_length=200)
    version = StrictCharField(
        required=False, allow_blank=True, max_length=100, help_text="else the outputs' banner"
    )
    workload = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="a builtin's name or one's own, for outputs that say neither their transaction "
        "type nor their statements",
    )
    outputs = serializers.ListField(
        child=ImportOutputInSerializer(), allow_empty=False, max_length=MAX_OUTPUTS
    )
    config = StrictCharField(required=False, allow_blank=True, max_length=1_000_000)
    lscpu = StrictCharField(required=False, allow_blank=True, max_length=100_000)
    note = StrictCharField(required=False, allow_blank=True, max_length=2000)


class ImportColumnInSerializer(InSerializer):
    column = ColumnReferenceField()
    version = StrictCharField(
        required=False, allow_blank=True, max_length=100, help_text="else read from the header"
    )


class ImportSummaryInSerializer(InSerializer):
    table = StrictCharField(max_length=1_000_000, help_text="the table as published")
    host = StrictCharField(max_length=200, help_text="a name for the machine the table was made on")
    clients_column = ColumnReferenceField(required=False, allow_null=True)
    columns = serializers.ListField(
        child=ImportColumnInSerializer(), required=False, max_length=100
    )
    filter = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=300,
        help_text="a table mixing models or workloads: the value of its label column to import",
    )
    builtin = serializers.ChoiceField(choices=Workload.Builtin.choices, required=False)
    workload_name = StrictCharField(required=False, allow_blank=True, max_length=200)
    scale = StrictIntegerField(required=False, allow_null=True, min_value=1)
    duration_s = StrictFloatField(required=False, allow_null=True, min_value=0.001)
    note = StrictCharField(required=False, allow_blank=True, max_length=2000)
    cpu_model = StrictCharField(required=False, allow_blank=True, max_length=300)
    cores = StrictIntegerField(required=False, allow_null=True, min_value=1)
    memory_gb = StrictIntegerField(required=False, allow_null=True, min_value=1)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("builtin") and not attrs.get("workload_name"):
            raise serializers.ValidationError(
                {"builtin": ["Give a builtin, or workload_name for a workload of one's own."]}
            )
        return attrs


def summary_workload(data: dict[str, Any]) -> dict[str, Any]:
    """The workload of a summary import: a builtin, or a named one whose script was not
    published."""
    if data.get("builtin"):
        return {"name": data["builtin"], "builtin": data["builtin"]}
    name = data["workload_name"]
    return {"name": name, "scripts": [{"name": name, "weight": 1, "body": "-- not published"}]}


def summary_facts(data: dict[str, Any]) -> dict[str, Any]:
    """The host facts a summary import gives: CPU model, cores, memory."""
    facts: dict[str, Any] = {"cpu_model": data["cpu_model"]} if data.get("cpu_model") else {}
    if data.get("cores"):
        facts["cores"] = data["cores"]
    if data.get("memory_gb"):
        facts["memory_bytes"] = data["memory_gb"] * 1024**3
    return facts
