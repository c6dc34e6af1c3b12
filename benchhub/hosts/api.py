"""Hosts API: benchmark machines and their current facts."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchhub.hosts.models import Host, HostFacts
from benchhub.hosts.selectors import host_list


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
