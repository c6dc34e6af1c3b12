"""Hosts API: benchmark machines and their current facts; who may run jobs on them; an agent's
report of its spool."""

import datetime as dt
import uuid
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchhub.api.fields import StrictCharField, StrictIntegerField
from benchhub.api.permissions import IsPerson, IsRunner, request_person
from benchhub.api.serializers import InSerializer
from benchhub.hosts.access import host_grant_check
from benchhub.hosts.authentication import request_runner_token
from benchhub.hosts.models import Host, HostFacts, HostGrant, host_name_key
from benchhub.hosts.selectors import host_list
from benchhub.hosts.services import (
    HostGrantInvalid,
    host_grant_add,
    host_grant_remove,
    host_spool_report,
)


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


class SetAsideRunInSerializer(InSerializer):
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


class HostSpoolReportInSerializer(InSerializer):
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


class GrantInSerializer(InSerializer):
    user = serializers.SlugRelatedField(
        slug_field="username",
        queryset=get_user_model().objects.all(),
        required=False,
        allow_null=True,
    )
    group = serializers.SlugRelatedField(
        slug_field="name", queryset=Group.objects.all(), required=False, allow_null=True
    )


class GrantOutSerializer(serializers.ModelSerializer):
    host = serializers.CharField(source="host.name", allow_null=True, default=None)
    user = serializers.CharField(source="user.username", allow_null=True, default=None)
    group = serializers.CharField(source="group.name", allow_null=True, default=None)
    granted_by = serializers.CharField(source="granted_by.username", allow_null=True, default=None)

    class Meta:
        model = HostGrant
        fields = ["id", "host", "tag", "user", "group", "granted_by", "granted_at"]


def _host(name: str) -> Host:
    host = Host.objects.filter(name_key=host_name_key(name)).first()
    if host is None:
        raise HostGrantInvalid("not_found", f"No host {name}.", status=404)
    return host


class HostGrantsView(APIView):
    """Who may run jobs on a host besides staff and its owners: its owners and staff list and
    grant the right (to a person or a group)."""

    permission_classes = [IsPerson]

    @extend_schema(responses=GrantOutSerializer(many=True))
    def get(self, request: Request, host_name: str) -> Response:
        host = _host(host_name)
        host_grant_check(person=request_person(request), host=host)
        grants = host.grants.select_related("host", "user", "group", "granted_by")[:500]
        return Response(GrantOutSerializer(grants, many=True).data)

    @extend_schema(request=GrantInSerializer, responses={201: GrantOutSerializer})
    def post(self, request: Request, host_name: str) -> Response:
        host = _host(host_name)
        body = GrantInSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        grant = host_grant_add(by=request_person(request), host=host, **body.validated_data)
        return Response(GrantOutSerializer(grant).data, status=status.HTTP_201_CREATED)


class HostGrantDetailView(APIView):
    permission_classes = [IsPerson]

    @extend_schema(responses={204: None})
    def delete(self, request: Request, host_name: str, grant_id: int) -> Response:
        grant = HostGrant.objects.filter(pk=grant_id, host=_host(host_name)).first()
        if grant is None:
            raise HostGrantInvalid("not_found", f"No grant {grant_id} on {host_name}.", status=404)
        host_grant_remove(by=request_person(request), grant=grant)
        return Response(status=status.HTTP_204_NO_CONTENT)
