"""Builds API: the PostgreSQL versions in the repository, in version order."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchhub.builds.models import Build
from benchhub.builds.selectors import build_list


class BuildOutSerializer(serializers.ModelSerializer):
    class Meta:
        model = Build
        fields = [
            "version",
            "major",
            "minor",
            "stage",
            "stage_number",
            "snapshot_date",
            "commit",
            "configure_flags",
            "origin",
        ]


class BuildsView(APIView):
    @extend_schema(responses=BuildOutSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(BuildOutSerializer(build_list(), many=True).data)
