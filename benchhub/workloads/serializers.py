"""Validation of workload definitions, shared by run uploads and jobs."""

import re
from typing import Any

from rest_framework import serializers

from benchhub.api.fields import StrictCharField, StrictIntegerField
from benchhub.workloads.models import Workload

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$")


def check_name(value: str) -> str:
    """A name fit for URLs and file names: letters, digits and . _ : @ -."""
    if not NAME_RE.match(value):
        raise serializers.ValidationError(
            "Use 1 to 200 letters, digits and . _ : @ -, starting with a letter or digit."
        )
    return value


class ScriptInSerializer(serializers.Serializer):
    name = StrictCharField(max_length=200)
    weight = StrictIntegerField(min_value=0, default=1)
    builtin = serializers.ChoiceField(choices=Workload.Builtin.choices, required=False)
    body = StrictCharField(max_length=100000, required=False, allow_blank=True)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("builtin") and not attrs.get("body"):
            raise serializers.ValidationError("A script needs a builtin name or a body.")
        return attrs


class WorkloadInSerializer(serializers.Serializer):
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

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("builtin") and not attrs.get("scripts"):
            raise serializers.ValidationError({"builtin": "Give a builtin script or scripts."})
        return attrs
