"""Hosts API: benchmark machines and their current facts; an agent's report of its spool."""

import datetime as dt
import uuid
from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchhub.api.fields import StrictCharField, StrictIntegerField
from benchhub.api.permissions import IsRunner
from benchhub.hosts.authentication import request_runner_token
from benchhub.hosts.models import Host, HostFacts
from benchhub.hosts.selectors import host_list
from benchhub.hosts.services import host_spool_report


class HostFactsOutSerializer(serializers.ModelSerializer):
    class Meta:
        model = HostFacts
        fields = [
            "captured_at",
            "fingerprint",
            "cpu_model",
            "sockets",
            "cores",
            "threads",
            "numa_nodes",
            "memory_bytes",
            "storage",
            "filesystem",
            "kernel",
            "os",
            "virtualization",
        ]


class HostOutSerializer(serializers.ModelSerializer):
    facts = HostFactsOutSerializer(source="current_facts", allow_null=True)

    class Meta:
        model = Host
        fields = ["name", "tags", "created_at", "last_seen_at", "facts"]


class HostsView(APIView):
    @extend_schema(responses=HostOutSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(HostOutSerializer(host_list(), many=True).data)


class SetAsideRunInSerializer(serializers.Serializer):
    """One run the agent's spool set aside, with the server's answer to it."""

    run_uuid = StrictCharField(max_length=36)
    status = StrictIntegerField(min_value=100, max_value=599, required=False, allow_null=True)
    error = StrictCharField(max_length=100, required=False, allow_blank=True, default="")
    detail = StrictCharField(max_length=1000, required=False, allow_blank=True, default="")
    tries = StrictIntegerField(min_value=1, max_value=1_000_000, default=1)
    set_aside_at = StrictCharField(max_length=40, required=False, allow_blank=True, default="")

    def validate_run_uuid(self, value: str) -> str:
        try:
            return str(uuid.UUID(value))
        except ValueError:
            raise serializers.ValidationError("Not a run UUID.") from None

    def validate_set_aside_at(self, value: str) -> str:
        if value:
            try:
                dt.datetime.fromisoformat(value)
            except ValueError:
                raise serializers.ValidationError("An ISO 8601 time.") from None
        return value


class HostSpoolReportInSerializer(serializers.Serializer):
    set_aside = SetAsideRunInSerializer(many=True, max_length=50)  # type: ignore[call-arg]


class HostSpoolReportView(APIView):
    """An agent reports the runs its spool set aside; they show on its host's page."""

    permission_classes = [IsRunner]

    @extend_schema(
        request=HostSpoolReportInSerializer,
        responses={204: OpenApiResponse(description="stored")},
    )
    def post(self, request: Request) -> Response:
        data = HostSpoolReportInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        entries: list[dict[str, Any]] = [dict(item) for item in data.validated_data["set_aside"]]
        host_spool_report(host=request_runner_token(request).host, set_aside=entries)
        return Response(status=status.HTTP_204_NO_CONTENT)
