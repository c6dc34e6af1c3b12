"""The workload catalog, read-only: its entries with their params, sizes and job defaults."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchhub.api.errors import error_response
from benchhub.workloads import catalog
from benchhub.workloads.serializers import (
    CatalogEntryDetailOutSerializer,
    CatalogEntryOutSerializer,
)


class CatalogView(APIView):
    @extend_schema(responses=CatalogEntryOutSerializer(many=True))
    def get(self, request: Request) -> Response:
        entries = [catalog.entry_describe(entry=entry) for entry in catalog.entry_list()]
        return Response(CatalogEntryOutSerializer(entries, many=True).data)


class CatalogEntryView(APIView):
    @extend_schema(responses=CatalogEntryDetailOutSerializer)
    def get(self, request: Request, entry_id: str) -> Response:
        entry = catalog.entry_get(entry_id=entry_id)
        if entry is None:
            return error_response(
                "not_found", f"No catalog entry {entry_id[:100]}.", status.HTTP_404_NOT_FOUND
            )
        return Response(CatalogEntryDetailOutSerializer(catalog.entry_describe(entry=entry)).data)
